// What a test session on this server can do, said before Talk: whether the agent has a language
// model to answer with, whether the server can hear speech, and whether the agent has a voice.
// From GET /capabilities (the server's providers) and GET /v1/providers (the account's own keys,
// which serve a part the server has none for).
import { DEFAULT_ACCOUNT_VENDOR, EMBEDDED_VENDORS, FLITE_VOICES, VENDORS } from '../../../../server/providers/catalog.ts';
import type { Capabilities, ProvidersView } from '../../lib/api-types.ts';

export interface TalkAbility {
  /** Whether this part works in a test session. */
  ok: boolean;
  /** One line a designer reads: what works, or what to do without it. */
  text: string;
}

export interface TalkAbilities {
  model: TalkAbility;
  hearing: TalkAbility;
  voice: TalkAbility;
}

const field = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);
const named = (value: unknown): string | null => (typeof value === 'string' && value !== '' && value !== 'none' ? value : null);

type Kind = 'stt' | 'llm' | 'tts';

/** "a deepgram", "an openai". */
const an = (word: string) => `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;

/**
 * The vendor this account's sessions use for a part (null: none), and whether with the account's
 * own key. GET /v1/providers names it as the engine resolves it (billing/provider-choice.ts: the
 * account's own key first, then the server's provider), so the server's provider and the
 * account's key are not two options the session may pick from: with a key of its own for another
 * vendor, the account's sessions never use the server's. /capabilities alone when the account's
 * view is not known.
 */
function sessionVendor(kind: Kind, capabilities: Capabilities, providers: ProvidersView | null): { vendor: string | null; ownKey: boolean } {
  const resolved = providers?.[`${kind}_provider`];
  if (typeof resolved === 'string') {
    const vendor = named(resolved);
    return { vendor, ownKey: vendor !== null && Boolean(providers?.[`${kind}_api_key`]) && !EMBEDDED_VENDORS.has(vendor) };
  }
  const server = named(field(field(capabilities, kind), 'provider'));
  const own = providers?.[`${kind}_api_key`] ? (named(providers[`${kind}_provider`]) ?? DEFAULT_ACCOUNT_VENDOR[kind]) : null;
  return own ? { vendor: own, ownKey: true } : { vendor: server, ownKey: false };
}

export function talkAbilities(capabilities: Capabilities, providers: ProvidersView | null): TalkAbilities {
  const llm = sessionVendor('llm', capabilities, providers);
  const model = named(field(field(capabilities, 'llm'), 'model'));
  const stt = sessionVendor('stt', capabilities, providers).vendor;
  const detectsTurns = named(field(field(capabilities, 'turn'), 'provider')) !== null;
  const tts = sessionVendor('tts', capabilities, providers).vendor;
  return {
    model: llm.vendor && llm.ownKey
      ? { ok: true, text: `The agent answers with your ${llm.vendor} key.` }
      : llm.vendor
        ? { ok: true, text: `The agent answers with ${llm.vendor}${model ? ` (${model})` : ''}.` }
        : { ok: false, text: 'No language model: the agent cannot answer. The simulator still walks the flow; add a model key in Settings → Provider keys.' },
    hearing:
      stt && detectsTurns
        ? { ok: true, text: `It hears you through the microphone (speech-to-text: ${stt}).` }
        : { ok: false, text: stt ? 'It cannot tell when you speak (no voice detection): type your turns.' : 'No speech-to-text: it cannot hear you. Type your turns instead.' },
    voice: tts
      ? { ok: true, text: `The agent speaks with ${tts === 'flite' ? 'the built-in voice (flite)' : tts}.` }
      : { ok: false, text: 'No voice: the agent’s words show as text only.' },
  };
}

/**
 * What a flow's `settings` ask of the server (docs/flows.md#extended-flow-keys); '' for what they
 * leave to it.
 */
export interface FlowAsks {
  llmModel: string;
  voiceProvider: string;
  /** `voice.voice` (absent from callers before it was checked). */
  voiceName?: string;
  sttModel: string;
  language: string;
}

/**
 * One plain line for each thing a flow's settings ask for that this server (or the account's own
 * keys) cannot give, in /capabilities terms; empty when it can give all. A session still runs:
 * the engine falls back to what the server has, so these are notices, not errors.
 */
export function missingForFlow(asks: FlowAsks, capabilities: Capabilities, providers: ProvidersView | null): string[] {
  const out: string[] = [];
  if (asks.llmModel !== '' && !sessionVendor('llm', capabilities, providers).vendor) {
    out.push(`The flow asks for the model ${asks.llmModel}, but this server has no language model (llm: none): the agent cannot answer. Add a model key in Settings → Provider keys.`);
  }
  const voice = asks.voiceProvider.trim().toLowerCase();
  if (voice !== '') {
    // The engine keeps the configured voice unless the flow's provider is the one the session speaks with.
    const tts = sessionVendor('tts', capabilities, providers);
    if (tts.vendor?.toLowerCase() !== voice) {
      const speaks = tts.vendor === null ? 'has no voice (tts: none)' : `speaks with ${tts.vendor}${tts.ownKey ? ' (your key)' : ''}, and the flow's voice is not used`;
      const remedy = VENDORS.tts.includes(voice)
        ? tts.ownKey
          ? `Set your voice key to ${an(voice)} one in Settings → Provider keys, or leave the voice provider empty.`
          : `Add a ${voice} key in Settings → Provider keys, or leave the voice provider empty.`
        : `Voxflow has no ${asks.voiceProvider} voices (it speaks with ${VENDORS.tts.join(', ')}): leave the voice provider empty, or name one of those.`;
      out.push(`The flow asks for ${an(asks.voiceProvider.trim())} voice, but this server ${speaks}. ${remedy}`);
    }
  }
  // A voice name goes to the vendor the session speaks with; the built-in voice has a few of its own and ignores others.
  const voiceName = (asks.voiceName ?? '').trim();
  const speaker = sessionVendor('tts', capabilities, providers).vendor;
  if (voiceName !== '' && (voice === '' || voice === speaker?.toLowerCase())) {
    if (speaker === null) {
      out.push(`The flow asks for the voice ${voiceName}, but this server has no voice (tts: none): the agent's words show as text only.`);
    } else if (speaker === 'flite' && !(FLITE_VOICES as readonly string[]).includes(voiceName)) {
      out.push(
        `The flow asks for the voice ${voiceName}, but this server speaks with the built-in voice (flite), which has only ${FLITE_VOICES.join(', ')}: its default voice speaks. Name one of those, or add a key for the vendor whose voice it is in Settings → Provider keys.`,
      );
    }
  }
  if ((asks.sttModel !== '' || asks.language !== '') && !sessionVendor('stt', capabilities, providers).vendor) {
    const what = asks.sttModel !== '' ? `the speech model ${asks.sttModel}` : `speech recognition in ${asks.language}`;
    out.push(`The flow asks for ${what}, but this server has no speech-to-text (stt: none): callers must type.`);
  }
  return out;
}
