// Builds the providers one account's sessions use: the account's own key where it set one (for
// that vendor's own service), otherwise the server's configured provider and key, otherwise the
// embedded one (flite) or nothing. Also prices the result (account-providers.ts).
import type { Config } from '../config.ts';
import type { AccountProviders } from '../engine/voice-engine.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { Store } from '../store/store.ts';
import { keyContext, resolveProviders, type ProviderKind, type ResolvedProvider } from './account-providers.ts';
import { createOpenAILanguageModel } from './llm/openai.ts';
import { createDeepgramSpeechToText } from './stt/deepgram.ts';
import { createOpenAISpeechToText } from './stt/openai.ts';
import { createDeepgramTextToSpeech } from './tts/deepgram.ts';
import { FLITE_VOICES, createFliteTts, type FliteVoice } from './tts/flite.ts';
import { createOpenAITextToSpeech } from './tts/openai.ts';
import type { LanguageModel, SpeechToText, TextToSpeech } from './types.ts';

interface Connection {
  apiKey: string | undefined;
  /** The server's own endpoint (e.g. a local model server); an account's key goes to the vendor. */
  baseUrl: string | undefined;
  model: string | undefined;
}

export interface ProviderRegistry {
  providersFor(accountId: string): AccountProviders;
  /** Starts the embedded voice now, so the first session's first sentence is not also the slowest. */
  warmUp(): Promise<void>;
}

export function createProviderRegistry(config: Config, store: Store, secrets: SecretBox): ProviderRegistry {
  // The embedded voice is shared: one worker serves every session.
  const voice = config.providers.tts.provider === 'flite' ? config.providers.tts.voice : undefined;
  const flite = createFliteTts({ voice: FLITE_VOICES.includes(voice as FliteVoice) ? (voice as FliteVoice) : undefined });

  const connection = (accountId: string, resolved: ResolvedProvider, kind: ProviderKind): Connection => {
    const server = config.providers[kind];
    if (resolved.keySource === 'account') {
      return { apiKey: secrets.open(resolved.sealedKey!, keyContext(accountId, kind)), baseUrl: undefined, model: resolved.provider === server.provider ? server.model : undefined };
    }
    return { apiKey: server.apiKey, baseUrl: server.baseUrl, model: server.model };
  };

  const speechToText = (accountId: string, resolved: ResolvedProvider): SpeechToText | null => {
    const c = connection(accountId, resolved, 'stt');
    switch (resolved.provider) {
      case 'deepgram':
        return createDeepgramSpeechToText({ apiKey: c.apiKey ?? '', baseUrl: c.baseUrl, model: c.model });
      case 'openai':
        return createOpenAISpeechToText({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model });
      default:
        return null;
    }
  };

  const languageModel = (accountId: string, resolved: ResolvedProvider): LanguageModel | null => {
    if (resolved.provider !== 'openai') return null;
    const c = connection(accountId, resolved, 'llm');
    return createOpenAILanguageModel({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model });
  };

  const textToSpeech = (accountId: string, resolved: ResolvedProvider): TextToSpeech => {
    const c = connection(accountId, resolved, 'tts');
    switch (resolved.provider) {
      case 'openai':
        return createOpenAITextToSpeech({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model, voice: config.providers.tts.voice });
      case 'deepgram':
        return createDeepgramTextToSpeech({ apiKey: c.apiKey ?? '', baseUrl: c.baseUrl, model: c.model });
      default:
        return flite;
    }
  };

  return {
    warmUp: () => flite.warmUp(),
    providersFor(accountId) {
      const resolved = resolveProviders(config, store.providers.get(accountId));
      return {
        providers: {
          stt: speechToText(accountId, resolved.stt),
          llm: languageModel(accountId, resolved.llm),
          tts: textToSpeech(accountId, resolved.tts),
        },
        ratePerMinute: resolved.stt.priceCents + resolved.llm.priceCents + resolved.tts.priceCents,
      };
    },
  };
}
