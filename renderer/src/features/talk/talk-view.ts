// The test-talk panel's view model: what the panel shows of a session, as plain immutable data
// folded by talk-reducer.ts, and the few questions the panel asks of it.
import type { TurnMetrics } from '../../../../server/protocol/events.ts';
import type { VariableValue } from '../../../../server/flow/template.ts';
import type { TalkOverlay } from './talk-overlay.ts';
import type { TurnDecisionText } from './turn-decisions.ts';

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
  /**
   * An `http` tool's request and what came back (docs/flows.md#extended-flow-keys), once its answer
   * is in.
   */
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

/** A turn-taking decision (turn-decisions.ts), in the order they came. */
export interface TurnDecisionEntry extends TurnDecisionText {
  id: number;
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
  /** Barge-in and end-of-turn decisions, oldest first. */
  turnDecisions: TurnDecisionEntry[];
  turns: TurnMetrics[];
  notices: Notice[];
  /** Why the connection could not be made or was lost (not a normal end). */
  failure: string | null;
  ended: SessionEnd | null;
  creditsExhausted: boolean;
  overlay: TalkOverlay;
  nextId: number;
}

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
    turnDecisions: [],
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
