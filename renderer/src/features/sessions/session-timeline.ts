// The session view's model (docs/api.md#what-a-call-leaves-behind), pure: one list of what
// happened, in order (lines spoken, tool calls, keypad presses, transfers, state changes,
// errors), each with its offset from the start, and where the conversation stood at any moment a
// scrubber points to. Keys and transfers are read from the raw timeline (its `dtmf` and
// `transfer` events), which the session's detail does not summarize.
import type { SessionDetail, SessionEventsPage } from '../../lib/api-types.ts';
import type { TalkMove, TalkOverlay } from '../talk/talk-overlay.ts';
import { describeTurnDecision, type TurnDecisionEvent, type TurnDecisionText } from '../talk/turn-decisions.ts';

export type Moment =
  | { kind: 'line'; at: number; offset: number; role: 'user' | 'agent'; text: string; interrupted: boolean }
  | { kind: 'tool'; at: number; offset: number; name: string; status: 'accepted' | 'rejected'; reason: string | null; from: string; to: string; source: 'model' | 'simulator'; args: string }
  | { kind: 'state'; at: number; offset: number; state: string }
  /** Keys pressed: by the caller (with the moves they made, possibly none) or sent by the agent. */
  | { kind: 'keys'; at: number; offset: number; digits: string; source: 'caller' | 'agent'; moves: Array<{ from: string; to: string; via: string }> }
  | { kind: 'transfer'; at: number; offset: number; to: string; mode: string; status: 'started' | 'completed' | 'failed'; reason: string | null }
  | { kind: 'error'; at: number; offset: number; code: string; message: string }
  /** A turn-taking decision: speech over the agent, or the end of the caller's turn (docs/flows.md#turn-taking). */
  | { kind: 'turn'; at: number; offset: number; decision: TurnDecisionText['kind']; summary: string; detail: string };

type TimelineEntry = SessionEventsPage['events'][number];

/** The keypad presses and transfers of a raw timeline, as moments; anything else, or malformed, is left out. */
function phoneMoments(events: readonly TimelineEntry[], offset: (at: number) => number): Moment[] {
  const found: Moment[] = [];
  for (const entry of events) {
    const event = entry.event as Record<string, unknown> | null;
    if (!event || typeof event !== 'object') continue;
    if (entry.type === 'dtmf' && typeof event.digits === 'string') {
      const moves = Array.isArray(event.moves) ? (event.moves as Array<Record<string, unknown>>) : [];
      found.push({
        kind: 'keys',
        at: entry.at,
        offset: offset(entry.at),
        digits: event.digits,
        source: event.source === 'agent' ? 'agent' : 'caller',
        moves: moves.filter((m) => typeof m.from_state === 'string' && typeof m.to_state === 'string').map((m) => ({ from: String(m.from_state), to: String(m.to_state), via: String(m.via ?? '') })),
      });
    } else if (entry.type === 'transfer' && typeof event.to === 'string' && (event.status === 'started' || event.status === 'completed' || event.status === 'failed')) {
      found.push({
        kind: 'transfer',
        at: entry.at,
        offset: offset(entry.at),
        to: event.to,
        mode: typeof event.mode === 'string' ? event.mode : 'cold',
        status: event.status,
        reason: typeof event.reason === 'string' ? event.reason : null,
      });
    }
  }
  return found;
}

/** The barge-in and end-of-turn decisions of a raw timeline, as moments; a malformed one is left out. */
function turnMoments(events: readonly TimelineEntry[], offset: (at: number) => number): Moment[] {
  const found: Moment[] = [];
  for (const entry of events) {
    const event = entry.event as Record<string, unknown> | null;
    if (!event || typeof event !== 'object') continue;
    const barge = entry.type === 'barge_in' && typeof event.decision === 'string' && typeof event.duration_ms === 'number';
    const end = entry.type === 'turn_end' && typeof event.wait_ms === 'number' && typeof event.reason === 'string';
    if (!barge && !end) continue;
    const text = describeTurnDecision({ ...event, type: entry.type } as TurnDecisionEvent);
    // A decision this studio has no words for (a newer server's) is left out rather than shown blank.
    if (!text) continue;
    found.push({ kind: 'turn', at: entry.at, offset: offset(entry.at), decision: text.kind, summary: text.summary, detail: text.detail });
  }
  return found;
}

/** Every moment of the session, oldest first; offsets in seconds from its start. `events`: its raw timeline, for keys and transfers. */
export function moments(detail: SessionDetail, events: readonly TimelineEntry[] = []): Moment[] {
  const start = detail.started_at ?? detail.created_at;
  const offset = (at: number) => Math.max(0, at - start);
  const all: Moment[] = [
    ...detail.transcript.map((t) => ({ kind: 'line' as const, at: t.at, offset: offset(t.at), role: t.role, text: t.text, interrupted: t.interrupted })),
    ...detail.tool_calls.map((c) => ({
      kind: 'tool' as const,
      at: c.at,
      offset: offset(c.at),
      name: c.name,
      status: c.status,
      reason: c.reason,
      from: c.from_state,
      to: c.to_state,
      source: c.source,
      args: JSON.stringify(c.arguments ?? {}),
    })),
    // A session is in its first state from its start (the event says so a moment later).
    ...detail.path.map((p, i) => ({ kind: 'state' as const, at: i === 0 ? Math.min(p.at, start) : p.at, offset: i === 0 ? 0 : offset(p.at), state: p.state })),
    ...detail.errors.map((e) => ({ kind: 'error' as const, at: e.at, offset: offset(e.at), code: e.code, message: e.message })),
    ...phoneMoments(events, offset),
    ...turnMoments(events, offset),
  ];
  // Stable: at the same instant a tool call or a key comes before the state it led to.
  const order = { line: 0, turn: 0, tool: 1, keys: 1, state: 2, transfer: 3, error: 4 } as const;
  return all.sort((a, b) => a.at - b.at || order[a.kind] - order[b.kind]);
}

/** How long the session's timeline spans, in seconds (at least its last moment). */
export function span(detail: SessionDetail, all: readonly Moment[]): number {
  return Math.max(detail.duration_secs ?? 0, all.at(-1)?.offset ?? 0);
}

/** The state the session was in at `offset` seconds: the last state entered by then. */
export function stateAt(all: readonly Moment[], offset: number): string | null {
  let state: string | null = null;
  for (const moment of all) {
    if (moment.offset > offset) break;
    if (moment.kind === 'state') state = moment.state;
  }
  return state;
}

/** The states the session passed through by `offset`, in order, each once per visit. */
export function pathUntil(all: readonly Moment[], offset: number): string[] {
  return all.filter((m): m is Extract<Moment, { kind: 'state' }> => m.kind === 'state' && m.offset <= offset).map((m) => m.state);
}

/**
 * The session as it stood at `offset`, in the overlay test-talk paints on the graph (the same
 * marks: the state it was in, the states entered and the moves taken, stays counted), so the
 * session view replays it with the editor's own drawing. Drawn as live: the state at the
 * scrubber's moment is the one "now", and the last move before it is the animated edge.
 */
export function overlayAt(all: readonly Moment[], offset: number): TalkOverlay {
  const moves: TalkMove[] = [];
  for (const moment of all) {
    if (moment.offset > offset) break;
    if (moment.kind === 'tool' && moment.status === 'accepted') moves.push({ from: moment.from, to: moment.to, tool: moment.name });
    // A key's move is the graph's `key 1` (or `collect account_number`) link.
    if (moment.kind === 'keys') for (const move of moment.moves) moves.push({ from: move.from, to: move.to, tool: move.via });
  }
  return { live: true, activeState: stateAt(all, offset), trail: pathUntil(all, offset), moves, lastMove: moves.at(-1) ?? null };
}

/** m:ss; with `tenths`, m:ss.t (a short session, whose moments fall within the same second). */
export function clock(seconds: number, tenths = false): string {
  const whole = Math.floor(seconds);
  const base = `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
  return tenths ? `${base}.${Math.min(9, Math.floor((seconds - whole) * 10))}` : base;
}
