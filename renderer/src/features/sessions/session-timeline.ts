// The session view's model (docs/api.md#what-a-call-leaves-behind), pure: one list of what
// happened, in order (lines spoken, tool calls, state changes, errors), each with its offset from
// the start, and where the conversation stood at any moment a scrubber points to.
import type { SessionDetail } from '../../lib/api-types.ts';
import type { TalkMove, TalkOverlay } from '../talk/talk-overlay.ts';

export type Moment =
  | { kind: 'line'; at: number; offset: number; role: 'user' | 'agent'; text: string; interrupted: boolean }
  | { kind: 'tool'; at: number; offset: number; name: string; status: 'accepted' | 'rejected'; reason: string | null; from: string; to: string; source: 'model' | 'simulator'; args: string }
  | { kind: 'state'; at: number; offset: number; state: string }
  | { kind: 'error'; at: number; offset: number; code: string; message: string };

/** Every moment of the session, oldest first; offsets in seconds from its start. */
export function moments(detail: SessionDetail): Moment[] {
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
  ];
  // Stable: at the same instant a tool call comes before the state it led to.
  const order = { line: 0, tool: 1, state: 2, error: 3 } as const;
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
  }
  return { live: true, activeState: stateAt(all, offset), trail: pathUntil(all, offset), moves, lastMove: moves.at(-1) ?? null };
}

/** m:ss; with `tenths`, m:ss.t (a short session, whose moments fall within the same second). */
export function clock(seconds: number, tenths = false): string {
  const whole = Math.floor(seconds);
  const base = `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
  return tenths ? `${base}.${Math.min(9, Math.floor((seconds - whole) * 10))}` : base;
}
