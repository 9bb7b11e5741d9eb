// GET /v1/credits/balance: what is left, the list rate, and what a minute costs this account now.
import type { FastifyInstance } from 'fastify';
import { RATE_PER_MINUTE_CENTS } from '../../billing/prices.ts';
import { effectiveRatePerMinute } from '../../billing/provider-choice.ts';
import { accountOf } from '../../http/services.ts';

export async function creditRoutes(app: FastifyInstance): Promise<void> {
  const { store, config } = app.services;
  app.get('/v1/credits/balance', { config: { auth: 'jwt_or_api_key' } }, async (request) => {
    const accountId = accountOf(request.principal);
    return {
      balance_usd_cents: store.credits.balance(accountId),
      rate_per_minute_usd_cents: RATE_PER_MINUTE_CENTS,
      effective_rate_per_minute_usd_cents: effectiveRatePerMinute(config, store.providers.get(accountId)),
    };
  });
}
