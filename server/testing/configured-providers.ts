// The providers a run uses outside the server (the CLI): the server's own settings (VOXFLOW_*
// variables and flags), without accounts, made through the vendor table (providers/vendors.ts).
// Vendor SDKs are loaded only for the mode that needs them, so a scripted run in CI starts in
// well under a second.
import type { Config } from '../config.ts';
import { meteredLanguageModel, meteredSpeechToText, meteredTextToSpeech } from '../engine/metered-providers.ts';
import { createFliteTts, FLITE_VOICES, type FliteVoice } from '../providers/tts/flite.ts';
import { createSileroVad } from '../providers/turn/silero.ts';
import type { ProviderKind } from '../providers/catalog.ts';
import type { TextToSpeech, VoiceActivityModel } from '../providers/types.ts';
import { createHostedProvider, type VendorConnection } from '../providers/vendors.ts';
import type { RunnerProviders } from './run-tests.ts';
import type { TestMode } from './results.ts';

type Providers = Config['providers'];

/** The server's settings for one kind, as the vendor table takes them. */
function connection(p: Providers[ProviderKind]): VendorConnection {
  return { apiKey: p.apiKey, baseUrl: p.baseUrl, model: p.model, timeoutMs: p.timeoutMs };
}

async function textToSpeech(p: Providers['tts']): Promise<TextToSpeech> {
  const hosted = await createHostedProvider('tts', p.provider, { ...connection(p), voice: p.voice });
  // The CLI's process serves one user, so flite may keep the sentences its callers repeat.
  return hosted ?? createFliteTts({ voice: FLITE_VOICES.includes(p.voice as FliteVoice) ? (p.voice as FliteVoice) : undefined }).forAccount('command-line');
}

/**
 * What `mode` needs of the configured providers; the embedded voice and VAD are loaded here. An
 * audio run of simulated callers also needs the language model (`withModel`): it plays both the
 * caller and the agent.
 */
export async function configuredProviders(providers: Providers, mode: TestMode, withModel = mode === 'model'): Promise<RunnerProviders> {
  if (mode === 'scripted') return {};
  const llm = withModel ? { llm: await createHostedProvider('llm', providers.llm.provider, connection(providers.llm)) } : {};
  if (mode === 'model') return llm;
  const vad = createSileroVad();
  await vad.load();
  return { ...llm, stt: await createHostedProvider('stt', providers.stt.provider, connection(providers.stt)), tts: await textToSpeech(providers.tts), vad };
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
