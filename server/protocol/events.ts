// Server-to-client events of a voice session (docs/api.md#voice-sessions): the same JSON on
// WebSocket text frames and on the WebRTC data channel. One discriminated union, shared with the
// studio (pure: no Node imports), so a new event or field is a type error wherever it is not
// handled.
import type { RejectionCode } from '../flow/runtime-types.ts';
import type { VariableValue } from '../flow/template.ts';
import type { SessionErrorCode } from './session-errors.ts';

export interface TurnMetrics {
  turn: number;
  endpointing_ms: number | null;
  stt_ms: number | null;
  llm_ttft_ms: number | null;
  tts_ttfb_ms: number | null;
  voice_to_voice_ms: number | null;
  server_ms: number | null;
}

export type ToolCallSource = 'model' | 'simulator';

/** A move the caller's keys made: a key of the state's keypad (`key 1`) or a number collected (`collect account_number`). */
export interface KeypadMoveEvent {
  from_state: string;
  to_state: string;
  via: string;
}

export type ServerEvent =
  | { type: 'session_started'; session_id: string; mode: 'assistant' | 'flow'; flow_id: string | null; sample_rate: number }
  | { type: 'flow_state'; state: string; prompt: string; artifact_type: string; variables: Record<string, VariableValue>; tools: string[] }
  | { type: 'artifact'; state: string; artifact_type: string; prompt: string }
  | { type: 'user_started_speaking' }
  | { type: 'user_stopped_speaking' }
  | { type: 'transcript'; role: 'user' | 'agent'; text: string; final: boolean; interrupted?: boolean }
  | {
      type: 'tool_call';
      name: string;
      arguments: unknown;
      status: 'accepted' | 'rejected';
      reason: string | null;
      /**
       * Why a rejected call was refused, as a code (absent when accepted): `unlisted_tool` (not a
       * tool of the state), `state_changed` (the state moved earlier in the same response),
       * `invalid_arguments`, `missing_argument`, `mistyped_argument`, `round_limit`.
       */
      code?: RejectionCode;
      from_state: string;
      to_state: string;
      /** Who made the call: the model, or the designer through simulate_tool. */
      source: ToolCallSource;
    }
  | {
      /**
       * An http tool's answer (docs/flows.md#extended-flow-keys): the request's target, what came
       * back, and how long it took.
       */
      type: 'tool_result';
      name: string;
      url: string;
      method: string;
      arguments: unknown;
      ok: boolean;
      /** The service's HTTP status; null when there was no answer. */
      http_status: number | null;
      duration_ms: number;
      /** The JSON the service answered (ok), else null. */
      result: unknown;
      /** Why there is no result (failed, timed out, refused), else null. */
      error: string | null;
      from_state: string;
      to_state: string;
      source: ToolCallSource;
    }
  | {
      /**
       * Keys pressed on the line: by the caller (a phone's keypad, or a client's `dtmf` message),
       * or by the agent (a `send_dtmf` tool). `moves` are the states the caller's keys led to, in
       * order (empty when they moved nothing, and for the agent's keys), as a tool_call's
       * from_state and to_state say it for a call.
       */
      type: 'dtmf';
      digits: string;
      source: 'caller' | 'agent';
      moves: KeypadMoveEvent[];
    }
  | {
      /**
       * A transfer of the call to a person (`on_enter.transfer`): `started` when the carrier is
       * asked, then `completed` (the caller is with the person, and the flow's part is over) or
       * `failed` with its reason (the caller goes to the state's `on_failed`).
       */
      type: 'transfer';
      to: string;
      mode: 'cold' | 'warm';
      status: 'started' | 'completed' | 'failed';
      reason?: string;
    }
  | { type: 'agent_started_speaking' }
  | { type: 'agent_stopped_speaking' }
  | { type: 'interrupted' }
  | {
      /**
       * What caller speech over the agent turned out to be (docs/flows.md#turn-taking). The agent's
       * audio pauses the moment the caller starts; then it is `interrupted` (the reply is cut, as
       * the `interrupted` event before this one says), an `ignored_backchannel` ("uh-huh", or fewer
       * words than the state's minimum) or `resumed` (no words: a cough, a car horn); either of the
       * last two resumes the agent from the start of its sentence. `transcript` is what decided it
       * (null when the duration did), `duration_ms` how long the caller had spoken by then.
       */
      type: 'barge_in';
      decision: 'interrupted' | 'ignored_backchannel' | 'resumed';
      reason: 'words' | 'duration' | 'backchannel' | 'too_few_words' | 'short' | 'no_words';
      transcript: string | null;
      duration_ms: number;
    }
  | {
      /**
       * The caller's turn is over: the silence waited for after their words (`wait_ms`) and why,
       * `unfinished` (the words stopped mid-sentence: a conjunction, a filler, a preposition, a
       * number being read), `short_answer` (a whole answer to the state's yes/no or choice
       * question), `default`, `fixed` (the state's wait does not adapt), or, with the server's
       * end-of-turn model (--turn-model) where the words said neither, `model_complete` or
       * `model_unfinished`. `transcript` is the words that decided it.
       */
      type: 'turn_end';
      wait_ms: number;
      reason: 'unfinished' | 'short_answer' | 'default' | 'fixed' | 'model_complete' | 'model_unfinished';
      transcript: string;
    }
  | ({ type: 'metrics' } & TurnMetrics)
  | { type: 'error'; code: SessionErrorCode; message: string; fatal: boolean }
  | { type: 'credits_exhausted'; balance_usd_cents: number }
  | { type: 'session_ended'; reason: string; duration_secs: number; credits_charged_usd_cents: number }
  | { type: 'pong' };

export type ServerEventType = ServerEvent['type'];

export type ServerEventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;

export function isServerEvent<T extends ServerEventType>(event: ServerEvent, type: T): event is ServerEventOf<T> {
  return event.type === type;
}
