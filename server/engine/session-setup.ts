// What a voice session is given by its host (the voice engine, the flow-test runner) and what it
// gives back: its setup (flow, providers, limits, where its end is recorded), the sink for its
// events and audio, and the end as the session measured it.
import type { EndOfTurnModel } from './turn-model.ts';
import type { SessionMeter } from '../billing/metering.ts';
import type { FlowDocument } from '../flow/types.ts';
import type { TransferAction } from '../flow/runtime.ts';
import type { ServerEvent } from '../protocol/events.ts';
import type { SessionProviders } from '../providers/types.ts';
import type { SessionTransport } from '../store/store.ts';
import type { AudioClock } from './audio-out.ts';
import type { SessionHooks } from './hooks.ts';
import type { SendToolRequest } from './http-tools.ts';
import type { TurnListener, UserTurnInput } from './user-input.ts';

export interface SessionLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

import type { TurnPolicy } from './turn-rules.ts';

export interface SessionSetup {
  id: string;
  accountId: string;
  flowId: string | null;
  /** The flow to run; null for a generic assistant session. */
  flow: FlowDocument | null;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  transport: SessionTransport;
  /** The system prompt of assistant mode. */
  assistantPrompt: string;
  /** simulate_tool is for the account owner's studio sessions only. */
  allowSimulator: boolean;
  language: string;
  providers: SessionProviders;
  /** Builds the VAD turn tracker; null when no VAD is available (audio then gets an error). */
  userInput: ((listener: TurnListener) => UserTurnInput) | null;
  meter: SessionMeter | null;
  hooks: SessionHooks;
  clock: AudioClock;
  log: SessionLogger;
  /** Records the end in the store; the session waits for it before saying session_ended. */
  recordEnd(end: SessionEndRecord): Promise<void>;
  sttFlushTimeoutMs?: number;
  /**
   * The server's turn-taking (docs/flows.md#turn-taking), under a flow's `settings.turn` and a
   * state's `turn`; each key absent: DEFAULT_TURN_POLICY's.
   */
  turnDefaults?: Partial<TurnPolicy>;
  /** The server's end-of-turn model (--turn-model), asked where a pause's words decide nothing (SpokenTurnsOptions.turnModel). */
  turnModel?: EndOfTurnModel;
  /** Hears the caller's audio as it arrives (a call recording); must not block. */
  callerAudioTap?: (pcm: Int16Array) => void;
  /**
   * Changes the caller's audio before anything hears it, the recording included (the studio's
   * phone line: 8 kHz G.711 and back); must not block.
   */
  callerAudioLine?: (pcm: Int16Array) => Int16Array;
  /** The longest the session lasts; then it ends with `max_duration`. 0 or absent: no limit. */
  maxDurationMs?: number;
  /** Idle this long (see VoiceSession.noteActivity), the session ends with `idle`. 0 or absent: never. */
  idleEndMs?: number;
  /** Called once, synchronously, as the session begins to end (it gives back its place in the engine). */
  onEnding?: () => void;
  /**
   * The clock the agent's audio is paced by (performance.now when absent). The flow-test runner
   * (server/testing) plays replies on a clock of its own, to run faster than real time.
   */
  audioNow?: () => number;
  /** Typed turns and simulate_tool unmetered by DRIVEN_TURNS_*: for the flow-test runner, which drives its own session. */
  unlimitedDrivenTurns?: boolean;
  /** Sends a flow's http tool requests, signed, with the account's secrets (absent: they fail). */
  sendToolRequest?: SendToolRequest | null;
  /**
   * An outbound phone call an answering machine took, past its greeting: the session leaves the
   * flow's `settings.voicemail.message` (rendered with its variables) and ends with `voicemail`;
   * the flow's states and the model do not run, and nothing the machine sends is heard.
   */
  leaveVoicemail?: boolean;
}

/**
 * The end as the session measured it. The record stores these very values, so GET /v1/sessions
 * and the session_ended event never disagree on a duration (counted by the store from when the
 * token was claimed, a little before the session started, it rounds differently near a half second).
 */
export interface SessionEndRecord {
  reason: string;
  creditsChargedCents: number;
  /** Unix time in seconds. */
  endedAt: number;
  /** Whole seconds from the session's start to endedAt: what session_ended says. */
  durationSecs: number;
}

/** What the engine gives a warm transfer: the transport dials the person and asks for this while it rings. */
export interface WarmTransferHelp {
  /** What the person is told before the caller joins ('' when the flow asks for no summary); never rejects, bounded in time. */
  summary(): Promise<string>;
  /**
   * The session's voice saying a text (16 kHz chunks), for a transport that tells the person the
   * summary itself (SIP; the carriers read it aloud in their own voice).
   */
  speak(text: string, signal: AbortSignal): AsyncIterable<Int16Array>;
}

export interface SessionOutput {
  sendEvent(event: ServerEvent): void;
  sendAudio(frame: Int16Array): void;
  close(code: number, reason: string): void;
  /**
   * Phone calls only (absent elsewhere: a browser has no line to hand on): moves the caller to a
   * number or SIP address through the carrier, resolving once the carrier took the transfer, or
   * with why it could not.
   */
  transfer?(action: TransferAction, warm?: WarmTransferHelp): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Phone calls only: plays keypad tones to the other party (a flow's `send_dtmf` tool). */
  sendDigits?(digits: string): Promise<void>;
  /**
   * Phone calls only: the line's own audio, for a recording. A phone call is recorded as it was
   * on the line (8 kHz), so when the session records, the transport, which holds that audio,
   * feeds both sides of the recording instead of the engine's 16 kHz frames.
   */
  lineAudio?: { sampleRate: number; record(tap: LineRecordingTap): void };
}

/** Both sides of a call at the line's rate; called on the audio path, so each call must be cheap. */
export interface LineRecordingTap {
  caller(pcm: Int16Array): void;
  agent(pcm: Int16Array): void;
}
