// The providers a run uses outside the server (the CLI): the server's own settings (VOXFLOW_*
// variables and flags), without accounts. Vendor SDKs are loaded only for the mode that needs
// them, so a scripted run in CI starts in well under a second.
import type { Config } from '../config.ts';
import { meteredLanguageModel, meteredSpeechToText, meteredTextToSpeech } from '../engine/metered-providers.ts';
import { createFliteTts, FLITE_VOICES, type FliteVoice } from '../providers/tts/flite.ts';
import { createSileroVad } from '../providers/turn/silero.ts';
import type { LanguageModel, SpeechToText, TextToSpeech, VoiceActivityModel } from '../providers/types.ts';
import type { RunnerProviders } from './run-tests.ts';
import type { TestMode } from './results.ts';

type Providers = Config['providers'];

async function languageModel(p: Providers['llm']): Promise<LanguageModel | null> {
  if (p.provider !== 'openai') return null;
  const { createOpenAILanguageModel } = await import('../providers/llm/openai.ts');
  return createOpenAILanguageModel({ apiKey: p.apiKey, baseUrl: p.baseUrl, model: p.model, timeoutMs: p.timeoutMs });
}

async function speechToText(p: Providers['stt']): Promise<SpeechToText | null> {
  switch (p.provider) {
    case 'deepgram':
      return (await import('../providers/stt/deepgram.ts')).createDeepgramSpeechToText({ apiKey: p.apiKey ?? '', baseUrl: p.baseUrl, model: p.model, timeoutMs: p.timeoutMs });
    case 'openai':
      return (await import('../providers/stt/openai.ts')).createOpenAISpeechToText({ apiKey: p.apiKey, baseUrl: p.baseUrl, model: p.model, timeoutMs: p.timeoutMs });
    default:
      return null;
  }
}

async function textToSpeech(p: Providers['tts']): Promise<TextToSpeech> {
  switch (p.provider) {
    case 'openai':
      return (await import('../providers/tts/openai.ts')).createOpenAITextToSpeech({ apiKey: p.apiKey, baseUrl: p.baseUrl, model: p.model, voice: p.voice, timeoutMs: p.timeoutMs });
    case 'deepgram':
      return (await import('../providers/tts/deepgram.ts')).createDeepgramTextToSpeech({ apiKey: p.apiKey ?? '', baseUrl: p.baseUrl, model: p.model, timeoutMs: p.timeoutMs });
    default:
      return createFliteTts({ voice: FLITE_VOICES.includes(p.voice as FliteVoice) ? (p.voice as FliteVoice) : undefined });
  }
}

/** What `mode` needs of the configured providers; the embedded voice and VAD are loaded here. */
export async function configuredProviders(providers: Providers, mode: TestMode): Promise<RunnerProviders> {
  if (mode === 'scripted') return {};
  if (mode === 'model') return { llm: await languageModel(providers.llm) };
  const vad = createSileroVad();
  await vad.load();
  return { stt: await speechToText(providers.stt), tts: await textToSpeech(providers.tts), vad };
}

/** The embedded voice activity model (Silero, the worker the server's sessions share), loaded. */
export async function embeddedVoiceActivity(): Promise<VoiceActivityModel> {
  const vad = createSileroVad();
  await vad.load();
  return vad;
}

/**
 * The providers of a run, each telling `used` when it is first called, so that a run pays for
 * the parts it uses as a session does (billing/metering.ts). The runner's own silent voice and
 * script are not providers and cost nothing.
 */
export function meteredRunnerProviders(providers: RunnerProviders, used: (part: 'stt' | 'llm' | 'tts') => void): RunnerProviders {
  const { llm, stt, tts } = providers;
  return {
    ...providers,
    llm: llm && meteredLanguageModel(llm, used),
    stt: stt && meteredSpeechToText(stt, used),
    tts: tts && meteredTextToSpeech(tts, used),
  };
}
