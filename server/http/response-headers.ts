// Headers every answer carries: `nosniff`, so a browser never reads a JSON error (which may echo
// input) as HTML or script; and `Cache-Control: no-store` on the answers that carry a secret
// (an access token, the one-time API key), so no proxy or browser cache keeps a copy.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const responseHeadersPlugin = fp(
  async (app: FastifyInstance) => {
    // A callback, not async: every answer passes it, and an async hook costs each a promise.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!reply.hasHeader('x-content-type-options')) void reply.header('x-content-type-options', 'nosniff');
      if (request.routeOptions.config?.carriesSecret) void reply.header('cache-control', 'no-store');
      done(null, payload);
    });
  },
  { name: 'voxflow-response-headers' },
);
