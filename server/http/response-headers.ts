// Headers every answer carries: `nosniff`, so a browser never reads a JSON error (which may echo
// input) as HTML or script; and `Cache-Control: no-store` on the answers that carry a secret
// (an access token, the one-time API key), so no proxy or browser cache keeps a copy.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const responseHeadersPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', async (request, reply, payload) => {
      if (!reply.hasHeader('x-content-type-options')) void reply.header('x-content-type-options', 'nosniff');
      if (request.routeOptions.config?.carriesSecret) void reply.header('cache-control', 'no-store');
      return payload;
    });
  },
  { name: 'voxflow-response-headers' },
);
