// What the flow runtime (runtime.ts) hands its callers: the outcome of a tool call, of an http
// tool's answer, what entering a state asks of the engine, and the snapshot a `flow_state` event
// carries. Kept apart from the machine itself so each file reads as one idea.
import type { VariableValue } from './template.ts';

/** What entering a state asks of the engine, its `on_enter.set` already applied. */
export interface StateEntry {
  state: string;
  /** `on_enter.say`, rendered; null when there is nothing to say. */
  say: string | null;
  /** End the session once what is queued has been spoken. */
  endSession: boolean;
  /** Run the model on entering (false for `respond: false`, and for a state that ends the session). */
  respond: boolean;
  /** `context: reset`: the model forgets the conversation so far. */
  resetContext: boolean;
  /** false: what is said on entering (the `say` and the first reply) cannot be interrupted. */
  interruptible: boolean;
  /** `on_enter.transfer`: hand the call on once `say` has been spoken; absent when the state does not. */
  transfer?: TransferAction;
}

/** A transfer for the engine to make through the carrier (the model is not run on entering). */
export interface TransferAction {
  /** E.164 number or SIP address. */
  to: string;
  mode: 'cold' | 'warm';
  /** Warm only: tell the person a summary of the call before joining them. */
  summary: boolean;
  /** The state to go to when the transfer fails (`transferFailed()`); null: the call ends. */
  onFailed: string | null;
  /** Warm only: how long the person's phone may ring; absent for the transport's default. */
  timeoutSeconds?: number;
}

/** A move the keypad or a failed transfer made, as a tool call's move is reported. */
export interface RuntimeMove {
  fromState: string;
  toState: string;
  /** What made it, as the graph and coverage name it: `key 1`, `collect account_number`, `transfer failed`. */
  via: string;
  /** The state entered; null when the move led back to the state it was made in (a stay). */
  entered: StateEntry | null;
}

/** What one key the caller pressed did (`key` is null for a number the timeout finished). */
export type KeyPress =
  /** A key of the state's `dtmf.keys`: the session moved (or stayed, for a key leading to its own state). */
  | { outcome: 'key'; key: string; fromState: string; toState: string; via: string }
  /** Part of a number being collected; `collected` is the number so far. */
  | { outcome: 'collecting'; key: string; collected: string }
  /** The number is complete: stored in `variable`, and the session moved to `collect.then`. */
  | { outcome: 'collected'; key: string | null; variable: string; value: string; fromState: string; toState: string; via: string }
  /** The state takes no keypad input, or not this key. */
  | { outcome: 'ignored'; key: string; state: string; reason: string };

/** What a run of keys did, committed at once like a tool call. */
export interface KeypadOutcome {
  presses: KeyPress[];
  fromState: string;
  toState: string;
  /** Each move, in order, with the state it entered; empty when the keys moved nothing. */
  moves: RuntimeMove[];
  /** Variables stored by a finished number. */
  stored: Record<string, VariableValue>;
  /** When digits are being collected after these keys: how long the engine waits before `collectTimedOut()`. */
  collectTimeoutMs: number | null;
}

/** An `http` tool's request, for the engine to send; its answer goes back through `applyToolResult`. */
export interface HttpToolRequest {
  /** Identifies the call to `applyToolResult`. */
  callNumber: number;
  tool: string;
  url: string;
  method: 'POST' | 'PUT' | 'PATCH';
  /** As written: `{secret.NAME}` references are the engine's to fill. */
  headers: Record<string, string>;
  timeoutMs: number;
  arguments: Record<string, VariableValue>;
  /** The session's variables after the call's arguments were stored. */
  variables: Record<string, VariableValue>;
}

/** What the engine got from an http tool: the JSON answer, or why there is none. */
export type HttpToolResponse = { ok: true; body: unknown } | { ok: false; error: string };

export interface ToolResultOutcome {
  name: string;
  fromState: string;
  toState: string;
  moved: boolean;
  /** The state entered, when the result moved the session. */
  entered: StateEntry | null;
  /** Variables stored from the result (`http.store`). */
  stored: Record<string, VariableValue>;
  /** Sent back to the model as the tool result. */
  result: { ok: true; state: string; result: unknown; note?: string } | { ok: false; state: string; error: string };
}

/** A tool's request timeout when its `http.timeout_ms` is absent. */
export const DEFAULT_HTTP_TIMEOUT_MS = 5_000;
/** The result field an http tool's answer names the next state in. */
export const NEXT_STATE_FIELD = 'next_state';

export type RejectionCode =
  | 'round_limit'
  | 'state_changed'
  | 'unlisted_tool'
  | 'invalid_arguments'
  | 'missing_argument'
  | 'mistyped_argument';

export interface AcceptedToolCall {
  status: 'accepted';
  name: string;
  /** The declared arguments after coercion; these are what was stored as variables. */
  arguments: Record<string, VariableValue>;
  fromState: string;
  toState: string;
  moved: boolean;
  /** The tool's speech cue rendered with the new arguments; null when there is nothing to say. */
  speechCue: string | null;
  /** Sent back to the model as the tool result (for an http tool: once its answer came, see `http`). */
  result: { ok: true; state: string; spoken?: string };
  /** The state entered, when the call moved the session. */
  entered?: StateEntry;
  /** An http tool's request: the move, if any, waits for its answer (`applyToolResult`). */
  http?: HttpToolRequest;
  /** A `send_dtmf` tool: the keys for the engine to press on the line (`w`: half a second's pause). */
  sendDtmf?: string;
}

export interface RejectedToolCall {
  status: 'rejected';
  name: string;
  /** What the model sent: the parsed value when it parsed, else the raw text. */
  arguments: unknown;
  fromState: string;
  toState: string;
  code: RejectionCode;
  reason: string;
  /** Sent back to the model as the tool result, so it can correct itself. */
  result: { ok: false; error: string };
}

export type ToolCallOutcome = AcceptedToolCall | RejectedToolCall;

/** What a `flow_state` event carries. */
export interface FlowSnapshot {
  state: string;
  variables: Record<string, VariableValue>;
  tools: string[];
  prompt: string;
  artifact_type: string;
}

export interface FlowRuntimeOptions {
  /** The session's start `context`: pre-fills variables before the first prompt renders. */
  context?: Record<string, unknown>;
}
