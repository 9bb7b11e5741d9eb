// What a test session on this server can do, said before Talk: whether the agent has a language
// model to answer with, whether the server can hear speech, and whether the agent has a voice.
// From GET /capabilities (the server's providers) and GET /v1/providers (the account's own keys,
// which serve a part the server has none for).
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

export function talkAbilities(capabilities: Capabilities, providers: ProvidersView | null): TalkAbilities {
  const server = (kind: 'stt' | 'llm' | 'tts') => named(field(field(capabilities, kind), 'provider'));
  const own = (kind: 'stt' | 'llm' | 'tts') => (providers?.[`${kind}_api_key`] ? (providers[`${kind}_provider`] ?? 'your key') : null);
  const llm = server('llm');
  const model = named(field(field(capabilities, 'llm'), 'model'));
  const ownLlm = own('llm');
  const stt = server('stt') ?? own('stt');
  const detectsTurns = named(field(field(capabilities, 'turn'), 'provider')) !== null;
  const tts = server('tts') ?? own('tts');
  return {
    model: llm
      ? { ok: true, text: `The agent answers with ${llm}${model ? ` (${model})` : ''}.` }
      : ownLlm
        ? { ok: true, text: `The agent answers with your ${ownLlm} key.` }
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

/** What a flow's `settings` ask of the server (DESIGN §12); '' for what they leave to it. */
export interface FlowAsks {
  llmModel: string;
  voiceProvider: string;
  sttModel: string;
  language: string;
}

/**
 * One plain line for each thing a flow's settings ask for that this server (or the account's own
 * keys) cannot give, in /capabilities terms; empty when it can give all. A session still runs:
 * the engine falls back to what the server has, so these are notices, not errors.
 */
export function missingForFlow(asks: FlowAsks, capabilities: Capabilities, providers: ProvidersView | null): string[] {
  const server = (kind: 'stt' | 'llm' | 'tts') => named(field(field(capabilities, kind), 'provider'));
  const own = (kind: 'stt' | 'llm' | 'tts') => (providers?.[`${kind}_api_key`] ? named(providers[`${kind}_provider`]) ?? 'your key' : null);
  const out: string[] = [];
  if (asks.llmModel !== '' && !server('llm') && !own('llm')) {
    out.push(`The flow asks for the model ${asks.llmModel}, but this server has no language model (llm: none): the agent cannot answer. Add a model key in Settings → Provider keys.`);
  }
  const voice = asks.voiceProvider.toLowerCase();
  if (voice !== '') {
    const speaks = [server('tts'), own('tts')].filter((p): p is string => p !== null);
    if (!speaks.some((p) => p.toLowerCase() === voice)) {
      out.push(
        `The flow asks for a ${asks.voiceProvider} voice, but this server ${speaks.length === 0 ? 'has no voice (tts: none)' : `speaks with ${speaks.join(' or ')}`}. Add a ${asks.voiceProvider} key in Settings → Provider keys, or leave the voice provider empty.`,
      );
    }
  }
  if ((asks.sttModel !== '' || asks.language !== '') && !server('stt') && !own('stt')) {
    const what = asks.sttModel !== '' ? `the speech model ${asks.sttModel}` : `speech recognition in ${asks.language}`;
    out.push(`The flow asks for ${what}, but this server has no speech-to-text (stt: none): callers must type.`);
  }
  return out;
}
