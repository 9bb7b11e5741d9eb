// The test-talk panel's view model, folded from what happens to a session: the server's events
// (DESIGN §4) and the few things only the client knows (connecting, the transport closing). Pure
// and immutable — every action returns a new view, and parts that did not change keep their
// identity — so scripted event sequences can be replayed in tests and the panel can tell the
// graph about overlay changes by comparing one reference.
import type { ServerEvent, TurnMetrics } from '../../../../server/protocol/events.ts';
import type { VariableValue } from '../../../../server/flow/template.ts';
import type { TalkOverlay } from './talk-overlay.ts';
import { describeSessionError } from './session-messages.ts';

export type ConnectionStatus = 'idle' | 'connecting' | 'live' | 'reconnecting' | 'ending' | 'ended' | 'failed';
export type Activity = 'idle' | 'listening' | 'thinking' | 'speaking' | 'interrupted';

export interface TranscriptLine {
  id: number;
  role: 'user' | 'agent';
  text: string;
  /** False while speech-to-text may still revise the words. */
  final: boolean;
  /** The user talked over this line (barge-in). */
  interrupted: boolean;
  /** What the user heard of an interrupted line before the agent stopped. */
  heard: string | null;
}

export interface ToolCallEntry {
  id: number;
  name: string;
  arguments: unknown;
  status: 'accepted' | 'rejected';
  reason: string | null;
  from: string;
  to: string;
  source: 'model' | 'simulator';
  /** An `http` tool's request and what came back (DESIGN §12), once its answer is in. */
  http?: HttpToolExchange;
}

export interface HttpToolExchange {
  method: string;
  url: string;
  ok: boolean;
  /** The service's HTTP status; null when there was no answer. */
  status: number | null;
  durationMs: number;
  /** The JSON answer (ok), else null. */
  result: unknown;
  error: string | null;
  /** Where the answer moved the session (the same state: it stayed). */
  to: string;
}

export interface Notice {
  id: number;
  code: string;
  message: string;
  /** `info`: the server lacks a provider, so part of the session cannot work (typed turns or the simulator still do). */
  tone: 'error' | 'info';
}

export interface SessionEnd {
  reason: string;
  durationSecs: number;
  creditsCents: number;
}

export interface CurrentState {
  name: string;
  /** The state's ui.prompt, rendered by the server with the variables. */
  prompt: string;
  artifactType: string;
  /** The tools the state lets the agent call. */
  tools: string[];
}

export interface TalkView {
  connection: ConnectionStatus;
  /** Connected without a microphone: typed turns and the simulator only. */
  textOnly: boolean;
  sessionId: string | null;
  /** Client clock (ms) when the session started, for the running timer. */
  startedAt: number | null;
  state: CurrentState | null;
  variables: Record<string, VariableValue>;
  /** Variables the latest state update added or changed. */
  changedVariables: string[];
  transcript: TranscriptLine[];
  activity: Activity;
  toolCalls: ToolCallEntry[];
  turns: TurnMetrics[];
  notices: Notice[];
  /** Why the connection could not be made or was lost (not a normal end). */
  failure: string | null;
  ended: SessionEnd | null;
  creditsExhausted: boolean;
  overlay: TalkOverlay;
  nextId: number;
}

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
const MAX_LINES = 500;
const MAX_TURNS = 200;
const MAX_CALLS = 500;

export const IDLE_OVERLAY: TalkOverlay = { live: false, activeState: null, trail: [], moves: [], lastMove: null };

export function initialTalkView(): TalkView {
  return {
    connection: 'idle',
    textOnly: false,
    sessionId: null,
    startedAt: null,
    state: null,
    variables: {},
    changedVariables: [],
    transcript: [],
    activity: 'idle',
    toolCalls: [],
    turns: [],
    notices: [],
    failure: null,
    ended: null,
    creditsExhausted: false,
    overlay: IDLE_OVERLAY,
    nextId: 1,
  };
}

/** Whether the session can take messages (typed turns, simulated tools, end). */
export function isConnected(view: TalkView): boolean {
  return view.connection === 'live' || view.connection === 'reconnecting';
}

/** Whether a session is starting or running, so Talk must not start another one. */
export function isBusy(view: TalkView): boolean {
  return view.connection === 'connecting' || view.connection === 'ending' || isConnected(view);
}

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

function onTranscript(view: TalkView, event: Extract<ServerEvent, { type: 'transcript' }>): TalkView {
  const lines = view.transcript.slice();
  if (event.interrupted && event.role === 'agent') {
    const marked = markInterrupted(lines, event.text);
    if (!marked) lines.push({ id: view.nextId, role: 'agent', text: event.text, final: true, interrupted: true, heard: event.text });
    return { ...view, transcript: lines.slice(-MAX_LINES), nextId: view.nextId + 1 };
  }
  // Interim words are revised in place until the final ones arrive.
  const interim = lastIndex(lines, (line) => line.role === event.role && !line.final);
  if (interim >= 0) {
    lines[interim] = { ...lines[interim]!, text: event.text, final: event.final };
    return { ...view, transcript: lines };
  }
  lines.push({ id: view.nextId, role: event.role, text: event.text, final: event.final, interrupted: false, heard: null });
  return { ...view, transcript: lines.slice(-MAX_LINES), nextId: view.nextId + 1 };
}

/**
 * A barge-in names what the user heard of the whole turn, which may span several agent lines (a
 * speech cue, then the model's answer). The heard words are matched against the turn's lines in
 * order: lines heard whole stay as they are, the first one not heard whole is marked cut with the
 * part that was heard, and any after it were never heard. False when the turn showed no agent
 * line yet (the agent was cut before the model finished).
 */
function markInterrupted(lines: TranscriptLine[], heardText: string): boolean {
  const turn: number[] = [];
  for (let i = lines.length - 1; i >= 0 && lines[i]!.role === 'agent'; i--) if (!lines[i]!.interrupted) turn.unshift(i);
  if (turn.length === 0) return false;
  let rest = heardText.trim();
  let cut = -1;
  for (const index of turn) {
    const line = lines[index]!;
    if (cut >= 0) {
      lines[index] = { ...line, interrupted: true, heard: '' };
      continue;
    }
    const text = line.text.trim();
    if (rest.startsWith(text) && index !== turn.at(-1)) {
      rest = rest.slice(text.length).trim();
      continue;
    }
    cut = index;
    lines[index] = { ...line, interrupted: true, heard: rest };
  }
  return true;
}

function lastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}

/** The median of the turns' total and server times, over the turns that have them. */
export function latencySummary(turns: readonly TurnMetrics[]): { turns: number; total: number | null; server: number | null } {
  const median = (values: number[]) => {
    if (values.length === 0) return null;
    const sorted = values.slice().sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const totals = turns.map((t) => t.voice_to_voice_ms).filter((v): v is number => v !== null);
  const servers = turns.map((t) => t.server_ms).filter((v): v is number => v !== null);
  return { turns: turns.length, total: median(totals), server: median(servers) };
}

const END_REASONS: Record<string, string> = {
  client_ended: 'you ended it',
  credits_exhausted: 'credits ran out',
  idle_timeout: 'nothing was heard for too long',
  client_disconnected: 'the connection dropped',
  connect_timeout: 'the connection never came up',
  ice_failed: 'no network path to the server',
  server_shutdown: 'the server shut down',
  restarted: 'a new connection replaced it',
  flow_ended: 'the flow ended the call',
};

/** Why a session ended, in words. */
export function describeEndReason(reason: string): string {
  return END_REASONS[reason] ?? reason.replaceAll('_', ' ');
}
