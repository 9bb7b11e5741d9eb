// Builds the providers one account's sessions use: the account's own key where it set one (for
// that vendor's own service), otherwise the server's configured provider and key, otherwise the
// embedded one (flite) or nothing, priced by billing/provider-choice.ts.
//
// Vendor modules are imported on first use: the SDKs take about a second to load, which a
// server that does not use them should not pay at start-up. Configured ones load in warmUp().
import { keyContext, resolveProviders, type ResolvedProvider } from '../billing/provider-choice.ts';
import type { Config } from '../config.ts';
import type { ProviderKind } from '../providers/catalog.ts';
import { FLITE_VOICES, createFliteTts, type FliteVoice } from '../providers/tts/flite.ts';
import type { AccountProviders, LanguageModel, SpeechToText, TextToSpeech } from '../providers/types.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { ownKeyErrors } from './own-key-errors.ts';
import type { Store } from '../store/store.ts';

interface Connection {
  apiKey: string | undefined;
  /** The server's own endpoint (e.g. a local model server); an account's key goes to the vendor. */
  baseUrl: string | undefined;
  model: string | undefined;
}

export interface ProviderRegistry {
  providersFor(accountId: string): Promise<AccountProviders>;
  /** Starts the embedded voice and loads the configured vendors' SDKs, off the request path. */
  warmUp(): Promise<void>;
}

const vendorModules = {
  llmOpenai: () => import('../providers/llm/openai.ts'),
  sttOpenai: () => import('../providers/stt/openai.ts'),
  sttDeepgram: () => import('../providers/stt/deepgram.ts'),
  ttsOpenai: () => import('../providers/tts/openai.ts'),
  ttsDeepgram: () => import('../providers/tts/deepgram.ts'),
};

export function createProviderRegistry(config: Config, store: Store, secrets: SecretBox): ProviderRegistry {
  // The embedded voice is shared: one worker serves every session.
  const voice = config.providers.tts.provider === 'flite' ? config.providers.tts.voice : undefined;
  const flite = createFliteTts({ voice: FLITE_VOICES.includes(voice as FliteVoice) ? (voice as FliteVoice) : undefined });

  const connection = (accountId: string, resolved: ResolvedProvider, kind: ProviderKind): Connection => {
    const server = config.providers[kind];
    if (resolved.keySource === 'account') {
      // The account's own key goes where the account said (its own OpenAI-compatible server),
      // else to the vendor; never to the server's endpoint, which may be a local model server.
      return {
        apiKey: secrets.open(resolved.sealedKey!, keyContext(accountId, kind)),
        baseUrl: resolved.baseUrl ?? undefined,
        model: resolved.model ?? (resolved.provider === server.provider && !server.baseUrl ? server.model : undefined),
      };
    }
    return { apiKey: server.apiKey, baseUrl: server.baseUrl, model: server.model };
  };

  const speechToText = async (accountId: string, resolved: ResolvedProvider): Promise<SpeechToText | null> => {
    const c = connection(accountId, resolved, 'stt');
    const timeoutMs = config.providers.stt.timeoutMs;
    switch (resolved.provider) {
      case 'deepgram':
        return (await vendorModules.sttDeepgram()).createDeepgramSpeechToText({ apiKey: c.apiKey ?? '', baseUrl: c.baseUrl, model: c.model, timeoutMs });
      case 'openai':
        return (await vendorModules.sttOpenai()).createOpenAISpeechToText({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model, timeoutMs });
      default:
        return null;
    }
  };

  const languageModel = async (accountId: string, resolved: ResolvedProvider): Promise<LanguageModel | null> => {
    if (resolved.provider !== 'openai') return null;
    const c = connection(accountId, resolved, 'llm');
    return (await vendorModules.llmOpenai()).createOpenAILanguageModel({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model, timeoutMs: config.providers.llm.timeoutMs });
  };

  const textToSpeech = async (accountId: string, resolved: ResolvedProvider): Promise<TextToSpeech> => {
    const c = connection(accountId, resolved, 'tts');
    const timeoutMs = config.providers.tts.timeoutMs;
    switch (resolved.provider) {
      case 'openai':
        return (await vendorModules.ttsOpenai()).createOpenAITextToSpeech({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model, voice: config.providers.tts.voice, timeoutMs });
      case 'deepgram':
        return (await vendorModules.ttsDeepgram()).createDeepgramTextToSpeech({ apiKey: c.apiKey ?? '', baseUrl: c.baseUrl, model: c.model, timeoutMs });
      default:
        return flite;
    }
  };

  return {
    async warmUp() {
      const { stt, llm, tts } = config.providers;
      await Promise.all([
        flite.warmUp(),
        stt.provider === 'deepgram' ? vendorModules.sttDeepgram() : stt.provider === 'openai' ? vendorModules.sttOpenai() : null,
        llm.provider === 'openai' ? vendorModules.llmOpenai() : null,
        tts.provider === 'openai' ? vendorModules.ttsOpenai() : tts.provider === 'deepgram' ? vendorModules.ttsDeepgram() : null,
      ]);
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
