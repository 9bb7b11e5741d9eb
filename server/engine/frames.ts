// The frames a voice session's stages hand each other, in one union. Two kinds, as in Pipecat:
//
// - Data frames carry the conversation down the pipeline (the caller's audio, their speech, their
//   words). Work a data frame started (a transcription, a model request, synthesized audio still
//   queued) is dropped when the agent is interrupted.
// - Control frames (interrupt, end, error) jump the queue: the assembly (session-pipeline.ts) acts
//   on one the moment it is pushed, ahead of any data still in flight, and an interruption never
//   drops one.
//
// Frames are plain objects passed synchronously from stage to stage: a 20 ms audio frame costs
// one small object and no promise, so the audio path keeps the latency and capacity it had.
import type { StateEntry, TransferAction } from '../flow/runtime-types.ts';
import type { ServerEvent } from '../protocol/events.ts';
import type { TurnTiming } from './turn-timing.ts';

// ── Data ───────────────────────────────────────────────────────────────────────────────────

/** PCM16 16 kHz mono as the transport received it. */
export interface CallerAudioFrame {
  type: 'caller_audio';
  pcm: Int16Array;
}

/** The VAD confirmed speech; `preRoll` is the audio from just before it began, for the STT. */
export interface SpeechStartedFrame {
  type: 'speech_started';
  preRoll: Int16Array;
}

/** The caller's audio while they speak, after the pre-roll. */
export interface CallerSpeechFrame {
  type: 'caller_speech';
  pcm: Int16Array;
}

/** The caller stopped; `lastVoicedAt` is when the last voiced audio arrived (performance.now). */
export interface TurnEndedFrame {
  type: 'turn_ended';
  lastVoicedAt: number;
}

/**
 * Between turns, voiced audio began (true) or faded before it was confirmed as speech (false):
 * a caller going on after a pause, heard before the VAD confirms it (200 ms later).
 */
export interface CallerVoicingFrame {
  type: 'caller_voicing';
  voicing: boolean;
}

/** The caller's words, spoken and recognised or typed: the agent answers them. */
export interface CallerTurnFrame {
  type: 'caller_turn';
  text: string;
  timing: TurnTiming;
}

/** A turn the client typed: it interrupts the agent like speech does, then is answered. */
export interface TypedTurnFrame {
  type: 'typed_turn';
  text: string;
}

/**
 * Words the caller said that get no answer of their own (they went on talking before the
 * transcript came): the model remembers them, and the next turn answers both.
 */
export interface CallerWordsFrame {
  type: 'caller_words';
  text: string;
}

/** Keys the caller pressed: a phone's keypad, or a client's `dtmf` message. */
export interface KeypadFrame {
  type: 'dtmf';
  digits: string;
}

/**
 * What the caller's keys did, for the agent stage to voice: the lines of the states they entered,
 * in order, then an answer from the model when `respond` (the state asks the model to speak on
 * entering, or the keys were not ones the state takes and the model should say so).
 */
export interface KeypadAnswerFrame {
  type: 'keypad_answer';
  entries: StateEntry[];
  respond: boolean;
}

/** What the VAD stage emits, and what a filter between it and the STT stage (a backchannel filter) takes and gives. */
export type CallerSpeechFrames = SpeechStartedFrame | CallerSpeechFrame | TurnEndedFrame | CallerVoicingFrame;

export type DataFrame = CallerAudioFrame | CallerSpeechFrames | TypedTurnFrame | CallerTurnFrame | CallerWordsFrame | KeypadFrame | KeypadAnswerFrame;

// ── Control ────────────────────────────────────────────────────────────────────────────────

/** Stop the agent now: cancel its turn, drop its queued audio, keep what was heard and committed. */
export interface InterruptFrame {
  type: 'interrupt';
}

/**
 * Caller speech began over the agent and may be only a backchannel: hold the agent's audio where
 * it is (nothing more is sent, the rest of the reply stays queued) until `resume_agent` or `interrupt`.
 */
export interface PauseAgentFrame {
  type: 'pause_agent';
}

/**
 * The speech over the agent was a backchannel or noise: the agent goes on from the start of its
 * sentence. `where_paused`: voiced audio faded before it was ever speech (a cough, a click), and
 * the agent goes on from where it stopped, a hiccup of the pause's length.
 */
export interface ResumeAgentFrame {
  type: 'resume_agent';
  from?: 'sentence_start' | 'where_paused';
}

/** End the session (the flow ended the call, a limit ran out). */
export interface EndFrame {
  type: 'end';
  reason: string;
}

/**
 * The agent finished a turn or fell silent. Not data and never dropped: the flow's speech rules
 * act on it (barge-in comes back, a call the flow ended ends, idle reprompts may be said).
 */
export interface AgentQuietFrame {
  type: 'agent_quiet';
}

/**
 * A provider failed; the client is told, and when the caller's turn or the model failed the
 * agent says a fallback line, so the caller is not left in silence.
 */
export interface ErrorFrame {
  type: 'error';
  code: 'stt_failed' | 'llm_failed' | 'tts_failed';
  error: unknown;
}

/** Something the session cannot do (no VAD, no model) or no longer does: the client is told once. */
export interface WarningFrame {
  type: 'warning';
  code: 'vad_failed' | 'vad_unavailable' | 'llm_unavailable';
  message?: string;
}

/** Hand the caller to a person (a state's `on_enter.transfer`), once the state's line was heard. */
export interface TransferFrame {
  type: 'transfer';
  action: TransferAction;
}

export type ControlFrame = InterruptFrame | PauseAgentFrame | ResumeAgentFrame | EndFrame | AgentQuietFrame | ErrorFrame | WarningFrame | TransferFrame;

export type Frame = DataFrame | ControlFrame;

/**
 * Where a stage's results go. `push` hands a frame on (the assembly decides to which stage);
 * `send` is an event for the client, which never waits behind audio. A stage's test passes its
 * own output and reads what came out.
 */
export interface StageOutput<Out extends Frame> {
  push(frame: Out): void;
  send(event: ServerEvent): void;
}
