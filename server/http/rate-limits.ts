// Rate limits (docs/api.md): every request counts against its IP, signup and login against a
// tight per-IP budget, and each authenticated request against its credential (the auth plugin
// calls `limitCredential` once it knows who is calling). Past a limit: 429 with Retry-After.
// The windows live in this process: with several nodes each node counts for itself. A route may
// stand outside them (`config.rateLimited: false`): /health, which a load balancer or monitor
// polls from the same address as the traffic it fronts, and which must not read 429 (the node
// "down") because that traffic is being limited.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';
import { RateLimiter } from './rate-limiter.ts';
import type { Principal } from './services.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** False for a route no rate limit counts or refuses (health checks). */
    rateLimited?: boolean;
  }
}

function take(limiter: RateLimiter, key: string): void {
  const decision = limiter.take(key);
  if (!decision.allowed) {
    throw new AppError('rate_limited', undefined, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
  }
}

export const rateLimitsPlugin = fp(
  async (app: FastifyInstance) => {
    const { rateLimit } = app.services.config;
    const perIp = new RateLimiter(rateLimit.ipPerMinute);
    const perCredential = new RateLimiter(rateLimit.credentialPerMinute);
    const authAttempts = new RateLimiter(rateLimit.authPerMinute);

    app.decorate('limitCredential', (principal: Principal) =>
      take(perCredential, principal.kind === 'api_key' ? `key ${principal.apiKeyId}` : `account ${principal.accountId}`),
    );

    // A callback, not async: nothing here waits, and an async hook costs every request a promise
    // and a turn of the microtask queue. request.routeOptions builds a new object on each read: read once.
    app.addHook('onRequest', (request, _reply, done) => {
      const { config, url } = request.routeOptions;
      if (config.rateLimited === false) return done();
      try {
        take(perIp, request.ip);
        if (url !== undefined && config.authAttempt) take(authAttempts, `${request.ip} ${url}`);
      } catch (error) {
        return done(error as Error);
      }
      done();
    });
  },
  { name: 'voxflow-rate-limits', dependencies: ['voxflow-services'] },
);
