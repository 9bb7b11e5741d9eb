// Per-account provider keys: read masked by either credential, changed with a JWT only, sealed
// at rest with AES-256-GCM and never returned in full.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { keyContext, resolveProviders } from '../../billing/provider-choice.ts';
import { PROVIDER_KINDS, VENDORS, type ProviderKind } from '../../providers/catalog.ts';
import { maskSecret, type SecretBox } from '../../security/secret-box.ts';
import type { ProviderSettings, ProviderSettingsChanges } from '../../store/store.ts';
import type { Config } from '../../config.ts';
import { accountOf } from '../../http/services.ts';
import { parseInput } from '../../http/validation.ts';

const key = z.string().trim().min(8, 'an API key is at least 8 characters').max(512, 'at most 512 characters').nullable();
const vendor = (kind: ProviderKind) =>
  z.enum(VENDORS[kind] as [string, ...string[]], { error: `must be one of ${VENDORS[kind].join(', ')}` }).nullable();

const PatchBody = z
  .object({
    stt_api_key: key.optional(),
    tts_api_key: key.optional(),
    llm_api_key: key.optional(),
    stt_provider: vendor('stt').optional(),
    tts_provider: vendor('tts').optional(),
    llm_provider: vendor('llm').optional(),
  })
  .strict();

function sealedKeyOf(settings: ProviderSettings, kind: ProviderKind): string | null {
  return kind === 'stt' ? settings.sttKeyEnc : kind === 'llm' ? settings.llmKeyEnc : settings.ttsKeyEnc;
}

function maskedView(config: Config, secrets: SecretBox, settings: ProviderSettings) {
  const resolved = resolveProviders(config, settings);
  const view: Record<string, string | null> = {};
  for (const kind of PROVIDER_KINDS) {
    const sealed = sealedKeyOf(settings, kind);
    let masked: string | null = null;
    if (sealed) {
      try {
        masked = maskSecret(secrets.open(sealed, keyContext(settings.accountId, kind)));
      } catch {
        // Sealed under another secret key (restored data dir without its key): say so, show nothing.
        masked = '(unreadable: set it again)';
      }
    }
    view[`${kind}_provider`] = resolved[kind].provider;
    view[`${kind}_api_key`] = masked;
  }
  return view;
}

export async function providerRoutes(app: FastifyInstance): Promise<void> {
  const { store, secrets, config } = app.services;

  app.get('/v1/providers', { config: { auth: 'jwt_or_api_key' } }, async (request) => {
    return maskedView(config, secrets, store.providers.get(accountOf(request.principal)));
  });

  app.patch('/v1/providers', { config: { auth: 'jwt' } }, async (request) => {
    const accountId = accountOf(request.principal);
    const body = parseInput(PatchBody, request.body);
    if (Object.keys(body).length === 0) {
      throw new AppError('invalid_request', 'Send at least one of stt_api_key, tts_api_key, llm_api_key (null clears a key), or a *_provider.');
    }
    const changes: ProviderSettingsChanges = {};
    for (const kind of PROVIDER_KINDS) {
      const newKey = body[`${kind}_api_key`];
      if (newKey !== undefined) {
        const sealed = newKey === null ? null : secrets.seal(newKey, keyContext(accountId, kind));
        if (kind === 'stt') changes.sttKeyEnc = sealed;
        else if (kind === 'llm') changes.llmKeyEnc = sealed;
        else changes.ttsKeyEnc = sealed;
      }
      const newVendor = body[`${kind}_provider`];
      if (newVendor !== undefined) {
        if (kind === 'stt') changes.sttProvider = newVendor;
        else if (kind === 'llm') changes.llmProvider = newVendor;
        else changes.ttsProvider = newVendor;
      }
    }
    return maskedView(config, secrets, await store.providers.update(accountId, changes));
  });
}
