// Per-account provider keys: read masked by either credential, changed with a JWT only, sealed
// at rest with AES-256-GCM and never returned in full.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { keyContext, resolveProviders } from '../../billing/provider-choice.ts';
import { PROVIDER_KINDS, VENDORS, type ProviderKind } from '../../providers/catalog.ts';
import { maskSecret, type SecretBox } from '../../security/secret-box.ts';
import { isLoopbackHost, outboundTargetProblem } from '../../security/outbound-target.ts';
import { checkProviderKey } from '../../providers/vendors.ts';
import type { ProviderSettings, ProviderSettingsChanges } from '../../store/store.ts';
import type { Config } from '../../config.ts';
import { accountOf } from '../../http/services.ts';
import { CARRIER_BODY_FIELDS, carrierChanges, carrierView } from './carriers.ts';
import { ProvidersView } from '../../protocol/api/accounts.ts';

const key = z.string().trim().min(8, 'an API key is at least 8 characters').max(512, 'at most 512 characters').nullable();
const vendor = (kind: ProviderKind) =>
  z.enum(VENDORS[kind] as [string, ...string[]], { error: `must be one of ${VENDORS[kind].join(', ')}` }).nullable();

const baseUrl = z
  .string()
  .trim()
  .max(2048, 'at most 2048 characters')
  .refine((value) => /^https?:\/\/[^/\s]+/i.test(value) && URL.canParse(value), { message: 'must be an http:// or https:// URL' })
  .nullable();
const model = z.string().trim().min(1, 'a model name is not empty').max(200, 'at most 200 characters').nullable();

const PatchBody = z
  .object({
    stt_api_key: key.optional(),
    tts_api_key: key.optional(),
    llm_api_key: key.optional(),
    stt_provider: vendor('stt').optional(),
    tts_provider: vendor('tts').optional(),
    llm_provider: vendor('llm').optional(),
    stt_base_url: baseUrl.optional(),
    tts_base_url: baseUrl.optional(),
    llm_base_url: baseUrl.optional(),
    stt_model: model.optional(),
    tts_model: model.optional(),
    llm_model: model.optional(),
    ...CARRIER_BODY_FIELDS,
  })
  .strict();

const CAMEL = { stt: 'stt', llm: 'llm', tts: 'tts' } as const;
const baseUrlOf = (settings: ProviderSettings, kind: ProviderKind) => settings[`${CAMEL[kind]}BaseUrl`] ?? null;
const modelOf = (settings: ProviderSettings, kind: ProviderKind) => settings[`${CAMEL[kind]}Model`] ?? null;

/** A server that listens on loopback is its user's own machine (the desktop app): its own network is theirs to use. */
function loopbackOnly(config: Config): boolean {
  return isLoopbackHost(config.host);
}

function sealedKeyOf(settings: ProviderSettings, kind: ProviderKind): string | null {
  return kind === 'stt' ? settings.sttKeyEnc : kind === 'llm' ? settings.llmKeyEnc : settings.ttsKeyEnc;
}

function maskedView(config: Config, secrets: SecretBox, settings: ProviderSettings): ProvidersView {
  const resolved = resolveProviders(config, settings);
  const view = {} as ProvidersView;
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
    view[`${kind}_base_url`] = baseUrlOf(settings, kind);
    view[`${kind}_model`] = modelOf(settings, kind);
  }
  return view;
}

type ProvidersView = import('zod').z.infer<typeof ProvidersView>;

export async function providerRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, secrets, config } = app.services;

  app.get('/v1/providers', { config: { auth: 'jwt_or_api_key' }, schema: { response: { 200: ProvidersView } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const [settings, carriers] = await Promise.all([store.providers.get(accountId), store.providers.carrierCredentials(accountId)]);
    return { ...maskedView(config, secrets, settings), ...carrierView(secrets, accountId, carriers) };
  });

  app.patch('/v1/providers', { config: { auth: 'jwt' }, schema: { body: PatchBody, response: { 200: ProvidersView } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const { body } = request;
    if (Object.keys(body).length === 0) {
      throw new AppError('invalid_request', 'Send at least one of stt_api_key, tts_api_key, llm_api_key (null clears a key), a *_provider, *_base_url or *_model, or a carrier credential such as twilio_auth_token.');
    }
    const carrierFieldChanges = carrierChanges(body, accountId, secrets);
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
      const newBase = body[`${kind}_base_url`];
      if (newBase !== undefined) changes[`${CAMEL[kind]}BaseUrl`] = newBase;
      const newModel = body[`${kind}_model`];
      if (newModel !== undefined) changes[`${CAMEL[kind]}Model`] = newModel;
    }
    // Before saving: where each own key would now go, and whether it works there.
    const before = await store.providers.get(accountId);
    const after: ProviderSettings = { ...before, ...changes };
    const resolved = resolveProviders(config, after);
    const warnings: string[] = [];
    for (const kind of PROVIDER_KINDS) {
      const touched = [`${kind}_api_key`, `${kind}_provider`, `${kind}_base_url`].some((field) => (body as Record<string, unknown>)[field] !== undefined);
      const part = resolved[kind];
      if (!touched || part.keySource !== 'account') continue;
      const target = part.baseUrl;
      if (target && !loopbackOnly(config)) {
        const problem = await outboundTargetProblem(target, { allowPrivate: false });
        if (problem) {
          throw new AppError('invalid_request', `${kind}_base_url must be a public internet address, not this server's own network or host: ${problem}.`, [{ field: `${kind}_base_url`, message: problem }]);
        }
      }
      const plainKey = (body[`${kind}_api_key`] as string | null | undefined) ?? secrets.open(part.sealedKey!, keyContext(accountId, kind));
      const checked = await checkProviderKey(part.provider, plainKey, target);
      if (!checked.ok && checked.rejected) {
        throw new AppError('provider_key_rejected', `Nothing was saved: ${checked.message}. Check the key${target ? ' and the base URL' : ''}.`, [{ field: `${kind}_api_key`, message: checked.message }]);
      }
      if (!checked.ok) warnings.push(`${kind}: saved, but ${checked.message}`);
    }
    const carriers = carrierFieldChanges.length > 0 ? await store.providers.updateCarrierCredentials(accountId, carrierFieldChanges) : await store.providers.carrierCredentials(accountId);
    const settings = Object.keys(changes).length > 0 ? await store.providers.update(accountId, changes) : before;
    const view = { ...maskedView(config, secrets, settings), ...carrierView(secrets, accountId, carriers) };
    return warnings.length > 0 ? { ...view, warnings } : view;
  });
}
