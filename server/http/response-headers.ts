// Headers every answer carries: `nosniff`, so a browser never reads a JSON error (which may echo
// input) as HTML or script; and `Cache-Control: no-store` on the answers that carry a secret
// (an access token, the one-time API key), so no proxy or browser cache keeps a copy.
import type { FastifyInstance, onSendHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

const noStore: onSendHookHandler = (_request, reply, payload, done) => {
  void reply.header('cache-control', 'no-store');
  done(null, payload);
};

export const responseHeadersPlugin = fp(
  async (app: FastifyInstance) => {
    // A callback, not async: every answer passes it, and an async hook costs each a promise.
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (!reply.hasHeader('x-content-type-options')) void reply.header('x-content-type-options', 'nosniff');
      done(null, payload);
    });
    // no-store only on the routes that carry a secret, decided once as each route is added rather
    // than by reading every request's route options (a new object on each read).
    app.addHook('onRoute', (route: RouteOptions) => {
      if (!route.config?.carriesSecret) return;
      const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
      route.onSend = [...own, noStore];
    });
  },
  { name: 'voxflow-response-headers' },
);
