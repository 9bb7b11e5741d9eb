// A VoiceSession on scripted providers and vitest's fake clock: the rig for "events in → events
// out" scenarios. Nothing listens on a socket; the session's events and audio frames are
// recorded as the transport would send them, and time moves only when a test says so, so a
// scenario that spans seconds of conversation runs in milliseconds and its timings are exact.
import { readFileSync } from 'node:fs';
import { onTestFinished, vi } from 'vitest';
import { AudioClock } from '../../server/engine/audio-out.ts';
import { SessionHooks, type HookEvent } from '../../server/engine/hooks.ts';
import { VoiceSession, type SessionSetup } from '../../server/engine/session.ts';
import type { TurnPolicy } from '../../server/engine/turn-rules.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import type { ClientMessage } from '../../server/protocol/client-messages.ts';
import type { ServerEvent, ServerEventOf, ServerEventType } from '../../server/protocol/events.ts';
import {
  scriptedModel,
  scriptedTranscriber,
  scriptedUser,
  scriptedVoice,
  type ScriptedModel,
  type ScriptedReply,
  type ScriptedTranscriber,
  type ScriptedUser,
  type ScriptedVoice,
  type ScriptedVoiceOptions,
} from '../fakes/scripted-providers.ts';

const GUESSING_GAME = readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');

/** Wall-clock time when each scenario starts (Date.now on the fake clock). */
export const SCENARIO_START = Date.UTC(2026, 0, 1, 9, 0, 0);

export interface ScriptedSessionOptions {
  /** The model's replies in order; null for a session without a language model. */
  model?: ScriptedReply[] | null;
  /** What the user says in each spoken turn; null for a session without speech to text. */
  transcripts?: string[] | null;
  /** How long the transcriber takes to give a turn's final text. */
  transcribeAfterMs?: number;
  voice?: ScriptedVoiceOptions;
  /** The guessing game (default) or an assistant session. */
  mode?: 'flow' | 'assistant';
  /** A flow of the test's own instead of the guessing game. */
  flowYaml?: string;
  allowSimulator?: boolean;
  /** The server's turn-taking (SessionSetup.turnDefaults). */
  turn?: Partial<TurnPolicy>;
  /** Called to record the end, as the store would; resolves at once unless given. */
  recordEnd?: SessionSetup['recordEnd'];
}

export interface ScriptedSession {
  session: VoiceSession;
  model: ScriptedModel | null;
  voice: ScriptedVoice;
  stt: ScriptedTranscriber | null;
  user: ScriptedUser;
  events: ServerEvent[];
  hooks: HookEvent[];
  /** Agent audio frames sent, each with the number of events sent before it. */
  frames: Array<{ afterEvents: number }>;
  /** What the session asked to record when it ended. */
  ends: Array<Parameters<SessionSetup['recordEnd']>[0]>;
  /** The transport was closed (code and reason). */
  closed: Array<{ code: number; reason: string }>;
  /** Event types sent since event index `from`. */
  kinds(from?: number): ServerEventType[];
  ofType<T extends ServerEventType>(type: T): Array<ServerEventOf<T>>;
  /** A client message, as the transport hands it over. */
  send(message: ClientMessage): void;
  /** Moves the fake clock on, running every timer and promise due meanwhile. */
  run(ms: number): Promise<void>;
}

/**
 * Builds and starts a session on the fake clock (installed here and removed when the test
 * finishes). The greeting has been asked for when this resolves; `run()` lets it play.
 */
export async function startScriptedSession(options: ScriptedSessionOptions = {}): Promise<ScriptedSession> {
  vi.useFakeTimers({ now: SCENARIO_START, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  const model = options.model === null ? null : scriptedModel(options.model ?? []);
  const stt = options.transcripts === null ? null : scriptedTranscriber(options.transcripts ?? [], { flushAfterMs: options.transcribeAfterMs });
  const voice = scriptedVoice(options.voice);
  const user = scriptedUser();
  const events: ServerEvent[] = [];
  const hooks: HookEvent[] = [];
  const frames: ScriptedSession['frames'] = [];
  const ends: ScriptedSession['ends'] = [];
  const closed: ScriptedSession['closed'] = [];
  const silent = { info() {}, warn() {}, error() {} };
  const flow = options.mode === 'assistant' ? null : parseFlow(options.flowYaml ?? GUESSING_GAME).document;
  if (options.mode !== 'assistant' && !flow) throw new Error('the flow does not parse');

  const session = new VoiceSession(
    {
      id: 'ses_scripted',
      accountId: 'acc_scripted',
      flowId: flow ? 'flow_guessing_game' : null,
      flow,
      context: {},
      metadata: {},
      transport: 'websocket',
      assistantPrompt: 'You are a helpful voice assistant.',
      allowSimulator: options.allowSimulator ?? false,
      language: 'en',
      providers: { llm: model, stt, tts: voice },
      userInput: user.userInput,
      meter: null,
      hooks: new SessionHooks([{ name: 'record', handle: (event) => void hooks.push(event) }], silent),
      clock: new AudioClock(),
      log: silent,
      ...(options.turn ? { turnDefaults: options.turn } : {}),
      recordEnd: async (end) => {
        ends.push(end);
        await options.recordEnd?.(end);
      },
    },
    {
      sendEvent: (event) => void events.push(structuredClone(event)),
      sendAudio: () => void frames.push({ afterEvents: events.length }),
      close: (code, reason) => void closed.push({ code, reason }),
    },
  );
  onTestFinished(async () => {
    await session.end('test_finished');
    vi.useRealTimers();
  });
  await session.start();
  return {
    session,
    model,
    voice,
    stt,
    user,
    events,
    hooks,
    frames,
    ends,
    closed,
    kinds: (from = 0) => events.slice(from).map((e) => e.type),
    ofType: <T extends ServerEventType>(type: T) => events.filter((e): e is ServerEventOf<T> => e.type === type),
    send: (message) => session.handleMessage(message),
    run: (ms) => vi.advanceTimersByTimeAsync(ms).then(() => undefined),
  };
}
