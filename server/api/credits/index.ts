// GET /v1/credits/balance: what is left, the list rate, and what a minute costs this account now.
// Beyond the spec's fields, `parts` says what each part of a session (speech to text, model,
// voice) costs a minute and why — the server's key, the account's own, or an embedded provider —
// so the studio can say before Talk what a session will cost, part by part (docs/providers.md).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { CreditPart as CreditPartSchema, CreditsView } from '../../protocol/api/accounts.ts';

type CreditPart = z.infer<typeof CreditPartSchema>;
import { RATE_PER_MINUTE_CENTS } from '../../billing/prices.ts';
import { effectiveRatePerMinute, resolveProviders } from '../../billing/provider-choice.ts';
import { accountOf } from '../../http/services.ts';
import { PROVIDER_KINDS, type ProviderKind } from '../../providers/catalog.ts';

export async function creditRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, config } = app.services;
  app.get('/v1/credits/balance', { config: { auth: 'jwt_or_api_key' }, schema: { response: { 200: CreditsView } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const settings = await store.providers.get(accountId);
    const resolved = resolveProviders(config, settings);
    return {
      balance_usd_cents: await store.credits.balance(accountId),
      rate_per_minute_usd_cents: RATE_PER_MINUTE_CENTS,
      effective_rate_per_minute_usd_cents: effectiveRatePerMinute(config, settings),
      parts: Object.fromEntries(
        PROVIDER_KINDS.map((kind) => [
          kind,
          { provider: resolved[kind].provider, key_source: resolved[kind].keySource, rate_per_minute_usd_cents: resolved[kind].priceCents },
        ]),
      ) as Record<ProviderKind, CreditPart>,
    };
  });
}
