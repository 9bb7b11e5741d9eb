// The test-talk panel's view model, folded from what happens to a session: the server's events
// (docs/api.md#voice-sessions) and the few things only the client knows (connecting, the transport
// closing). Pure and immutable — every action returns a new view, and parts that did not change
// keep their identity — so scripted event sequences can be replayed in tests and the panel can tell
// the graph about overlay changes by comparing one reference.
import type { ServerEvent } from '../../../../server/protocol/events.ts';
import { describeSessionError } from './session-messages.ts';
import { onTranscript } from './talk-transcript.ts';
import { describeTurnDecision } from './turn-decisions.ts';
import {
  IDLE_OVERLAY,
  initialTalkView,
  isConnected,
  type CurrentState,
  type HttpToolExchange,
  type Notice,
  type TalkView,
  type ToolCallEntry,
} from './talk-view.ts';

export type TalkAction =
  | { type: 'connect'; textOnly: boolean }
  | { type: 'reconnecting' }
  | { type: 'reconnected' }
  | { type: 'ending' }
  | { type: 'server'; event: ServerEvent; at: number }
  /** The transport closed; a failure unless the session said it ended. */
  | { type: 'closed'; message: string }
  /** Connecting failed before any session existed. */
  | { type: 'failed'; message: string }
  | { type: 'dismiss'; id: number }
  /** The designer gave up on a connection that was still being made. */
  | { type: 'cancel' }
  | { type: 'clear' }
  /** Takes a past run's trace off the graph (Clear, or the flow was edited), keeping the rest. */
  | { type: 'clear_trace' }
  /** Something the studio knows before the server says it (this server cannot hear). */
  | { type: 'notice'; code: string; message: string; tone: 'error' | 'info' };

/** Codes that mean "this server has no such provider": a fact about the setup, not a fault. */
const SETUP_CODES = new Set(['llm_unavailable', 'stt_unavailable', 'vad_unavailable']);
const MAX_NOTICES = 20;
const MAX_TURNS = 200;
const MAX_CALLS = 500;
const MAX_DECISIONS = 200;

export function talkReducer(view: TalkView, action: TalkAction): TalkView {
  switch (action.type) {
    case 'connect':
      // A new session starts from a clean slate: the previous trail is replaced, not extended.
      return { ...initialTalkView(), connection: 'connecting', textOnly: action.textOnly, nextId: view.nextId };
    case 'reconnecting':
      return view.connection === 'live' ? { ...view, connection: 'reconnecting' } : view;
    case 'reconnected':
      return view.connection === 'reconnecting' ? { ...view, connection: 'live' } : view;
    case 'ending':
      return isConnected(view) ? { ...view, connection: 'ending' } : view;
    case 'server':
      return onServerEvent(view, action.event, action.at);
    case 'closed':
      if (view.connection === 'ended' || view.connection === 'idle' || view.connection === 'failed') return view;
      // Hanging up never got its session_ended back (the server went away): still a normal end.
      if (view.connection === 'ending') return finish(view, { connection: 'ended' });
      return finish(view, { connection: 'failed', failure: action.message });
    case 'failed':
      return finish(view, { connection: 'failed', failure: action.message });
    case 'dismiss':
      return { ...view, notices: view.notices.filter((n) => n.id !== action.id) };
    case 'cancel':
      return view.connection === 'connecting' ? { ...initialTalkView(), nextId: view.nextId } : view;
    case 'clear':
      return { ...initialTalkView(), nextId: view.nextId };
    case 'clear_trace':
      return view.overlay.live || view.overlay.trail.length === 0 ? view : { ...view, overlay: IDLE_OVERLAY };
    case 'notice':
      return addNotice(view, action.code, action.message, action.tone);
  }
}

/** A notice, unless the same fact is already shown (a missing model, at the start and again at the first typed turn). */
function addNotice(view: TalkView, code: string, message: string, tone: Notice['tone']): TalkView {
  const repeated = view.notices.some((n) => n.code === code && (tone === 'info' || n.message === message));
  if (repeated) return view;
  const notice: Notice = { id: view.nextId, code, message, tone };
  return { ...view, notices: [...view.notices, notice].slice(-MAX_NOTICES), nextId: view.nextId + 1 };
}

/** The session is over: the overlay stops being live but keeps the path, for studying it on the graph. */
function finish(view: TalkView, changes: Partial<TalkView>): TalkView {
  const overlay = view.overlay.live || view.overlay.lastMove ? { ...view.overlay, live: false, lastMove: null } : view.overlay;
  return { ...view, ...changes, activity: 'idle', overlay };
}

function onServerEvent(view: TalkView, event: ServerEvent, at: number): TalkView {
  // Stragglers after the end (or from a session the user already left) change nothing.
  if (view.connection === 'ended' || view.connection === 'idle') return view;
  switch (event.type) {
    case 'session_started':
      return { ...view, connection: 'live', sessionId: event.session_id, startedAt: at, overlay: { ...view.overlay, live: true } };
    case 'flow_state':
      return onFlowState(view, event);
    case 'transcript':
      return onTranscript(view, event);
    case 'tool_call':
      return onToolCall(view, event);
    case 'tool_result':
      return onToolResult(view, event);
    case 'user_started_speaking':
      return { ...view, activity: 'listening' };
    case 'user_stopped_speaking':
      return { ...view, activity: 'thinking' };
    case 'agent_started_speaking':
      return { ...view, activity: 'speaking' };
    case 'agent_stopped_speaking':
      // "Interrupted" stays up until something else happens, so the barge-in is seen.
      return view.activity === 'interrupted' ? view : { ...view, activity: 'idle' };
    case 'interrupted':
      return { ...view, activity: 'interrupted' };
    case 'barge_in':
    case 'turn_end': {
      const text = describeTurnDecision(event);
      if (!text) return view;
      const turnDecisions = [...view.turnDecisions, { id: view.nextId, ...text }].slice(-MAX_DECISIONS);
      // Speech over the agent that was no interruption: the agent goes on talking.
      const activity = event.type === 'barge_in' && event.decision !== 'interrupted' ? 'speaking' : view.activity;
      return { ...view, turnDecisions, activity, nextId: view.nextId + 1 };
    }
    case 'metrics': {
      const { type: _type, ...metrics } = event;
      const turns = [...view.turns, metrics].slice(-MAX_TURNS);
      return { ...view, turns, activity: view.activity === 'thinking' ? 'idle' : view.activity };
    }
    case 'error': {
      const tone = SETUP_CODES.has(event.code) && !event.fatal ? 'info' : 'error';
      // A turn that failed is not "thinking" any more.
      const activity = view.activity === 'thinking' ? 'idle' : view.activity;
      const next = addNotice(view, event.code, describeSessionError(event.code, event.message), tone);
      return activity === view.activity ? next : { ...next, activity };
    }
    case 'credits_exhausted':
      return { ...view, creditsExhausted: true };
    case 'session_ended':
      return finish(view, {
        connection: 'ended',
        ended: { reason: event.reason, durationSecs: event.duration_secs, creditsCents: event.credits_charged_usd_cents },
      });
    case 'artifact': // the same state and prompt as the flow_state sent with it
    case 'pong':
      return view;
    default:
      return view; // an event type this studio does not know yet
  }
}

function onFlowState(view: TalkView, event: Extract<ServerEvent, { type: 'flow_state' }>): TalkView {
  const changedVariables = Object.keys(event.variables).filter((name) => !Object.is(view.variables[name], event.variables[name]));
  const state: CurrentState = { name: event.state, prompt: event.prompt, artifactType: event.artifact_type, tools: event.tools };
  let overlay = view.overlay;
  // A move already entered the trail with its tool call; this covers the initial state (and any
  // move the server makes without a tool call).
  if (overlay.activeState !== event.state) overlay = { ...overlay, activeState: event.state, trail: [...overlay.trail, event.state] };
  return { ...view, state, variables: event.variables, changedVariables, overlay };
}

/**
 * An http tool's answer joins the accepted call it answers: the latest one of that tool, made in
 * the state the answer came in, still without one. Its move reaches the graph with the
 * `flow_state` that follows it.
 */
function onToolResult(view: TalkView, event: Extract<ServerEvent, { type: 'tool_result' }>): TalkView {
  let index = -1;
  for (let i = view.toolCalls.length - 1; i >= 0; i--) {
    const call = view.toolCalls[i]!;
    if (call.name === event.name && call.status === 'accepted' && !call.http && call.from === event.from_state) {
      index = i;
      break;
    }
  }
  if (index < 0) return view;
  const http: HttpToolExchange = {
    method: event.method,
    url: event.url,
    ok: event.ok,
    status: event.http_status,
    durationMs: event.duration_ms,
    result: event.result,
    error: event.error,
    to: event.to_state,
  };
  const toolCalls = view.toolCalls.map((call, i) => (i === index ? { ...call, http, to: event.to_state } : call));
  return { ...view, toolCalls };
}

function onToolCall(view: TalkView, event: Extract<ServerEvent, { type: 'tool_call' }>): TalkView {
  const entry: ToolCallEntry = {
    id: view.nextId,
    name: event.name,
    arguments: event.arguments,
    status: event.status,
    reason: event.reason,
    from: event.from_state,
    to: event.to_state,
    source: event.source ?? 'model',
  };
  const toolCalls = [...view.toolCalls, entry].slice(-MAX_CALLS);
  let overlay = view.overlay;
  if (event.status === 'accepted') {
    const lastMove = { from: event.from_state, to: event.to_state, tool: event.name };
    const moves = [...overlay.moves, lastMove].slice(-MAX_CALLS);
    // A stay (to = from) is no new entry in the trail, but the graph lights and counts its
    // self-loop.
    overlay =
      event.to_state !== event.from_state
        ? { ...overlay, activeState: event.to_state, trail: [...overlay.trail, event.to_state], moves, lastMove }
        : { ...overlay, moves, lastMove };
  }
  return { ...view, toolCalls, overlay, nextId: view.nextId + 1 };
}
