// Builds the providers one account's sessions use: the account's own key where it set one (for
// that vendor's own service), otherwise the server's configured provider and key, otherwise the
// embedded one (flite) or nothing, priced by billing/provider-choice.ts.
//
// The hosted vendors are made through providers/vendors.ts, which loads their SDKs on first use;
// configured ones load in warmUp().
import { keyContext, resolveProviders, type ResolvedProvider } from '../billing/provider-choice.ts';
import type { Config } from '../config.ts';
import type { ProviderKind } from '../providers/catalog.ts';
import { FLITE_VOICES, createFliteTts, type FliteVoice } from '../providers/tts/flite.ts';
import type { AccountProviders, LanguageModel, SpeechToText, TextToSpeech } from '../providers/types.ts';
import { createHostedProvider, loadHostedVendor, type VendorConnection } from '../providers/vendors.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { ownKeyErrors } from './own-key-errors.ts';
import type { Store } from '../store/store.ts';

export interface ProviderRegistry {
  providersFor(accountId: string): Promise<AccountProviders>;
  /** Starts the embedded voice and loads the configured vendors' SDKs, off the request path. */
  warmUp(): Promise<void>;
}

export function createProviderRegistry(config: Config, store: Store, secrets: SecretBox): ProviderRegistry {
  // The embedded voice is shared: one worker serves every session.
  const voice = config.providers.tts.provider === 'flite' ? config.providers.tts.voice : undefined;
  const flite = createFliteTts({ voice: FLITE_VOICES.includes(voice as FliteVoice) ? (voice as FliteVoice) : undefined });

  const connection = (accountId: string, resolved: ResolvedProvider, kind: ProviderKind): VendorConnection => {
    const server = config.providers[kind];
    const timeoutMs = server.timeoutMs;
    if (resolved.keySource === 'account') {
      // The account's own key goes where the account said (its own OpenAI-compatible server),
      // else to the vendor; never to the server's endpoint, which may be a local model server.
      return {
        apiKey: secrets.open(resolved.sealedKey!, keyContext(accountId, kind)),
        baseUrl: resolved.baseUrl ?? undefined,
        model: resolved.model ?? (resolved.provider === server.provider && !server.baseUrl ? server.model : undefined),
        timeoutMs,
      };
    }
    return { apiKey: server.apiKey, baseUrl: server.baseUrl, model: server.model, timeoutMs };
  };

  const speechToText = (accountId: string, resolved: ResolvedProvider): Promise<SpeechToText | null> =>
    createHostedProvider('stt', resolved.provider, connection(accountId, resolved, 'stt'));

  const languageModel = (accountId: string, resolved: ResolvedProvider): Promise<LanguageModel | null> =>
    createHostedProvider('llm', resolved.provider, connection(accountId, resolved, 'llm'));

  const textToSpeech = async (accountId: string, resolved: ResolvedProvider): Promise<TextToSpeech> =>
    (await createHostedProvider('tts', resolved.provider, { ...connection(accountId, resolved, 'tts'), voice: config.providers.tts.voice })) ?? flite.forAccount(accountId);

  return {
    async warmUp() {
      const { stt, llm, tts } = config.providers;
      await Promise.all([flite.warmUp(), loadHostedVendor('stt', stt.provider), loadHostedVendor('llm', llm.provider), loadHostedVendor('tts', tts.provider)]);
    },
    async providersFor(accountId) {
      const resolved = resolveProviders(config, await store.providers.get(accountId));
      const [stt, llm, tts] = await Promise.all([
        speechToText(accountId, resolved.stt),
        languageModel(accountId, resolved.llm),
        textToSpeech(accountId, resolved.tts),
      ]);
      return {
        // A refused own key says so: the account fixes it in its settings, not the server's operator.
        providers: ownKeyErrors({ stt, llm, tts }, { stt: resolved.stt.keySource === 'account', llm: resolved.llm.keySource === 'account', tts: resolved.tts.keySource === 'account' }),
        ratePerMinute: resolved.stt.priceCents + resolved.llm.priceCents + resolved.tts.priceCents,
        partPrices: { stt: resolved.stt.priceCents, llm: resolved.llm.priceCents, tts: resolved.tts.priceCents },
      };
    },
  };
}
