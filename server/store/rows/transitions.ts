// Each session's path through its flow as rows (session_transitions), so the traffic of a flow's
// calls is counted with GROUP BY (repositories/analytics.ts) instead of reading timelines.
//
// Derived where a timeline batch is stored (timelines.append on both stores), from the same
// events the session's `path` is folded from (outcomes/session-detail.ts): a `flow_state` naming
// another state than the last one is a move. The first one (from null) is the call reaching its
// initial state. The tool is the accepted `tool_call` (or the http tool's `tool_result`) that
// named this move's target since the last move; a move by the keypad or a timeout has none.
//
// Two flags make the counts one pass over the rows: `first_visit` (this session reached `to_state`
// for the first time) and `first_take` (this session took this edge, tool included, for the
// first time). Calls reaching a state = SUM(first_visit); calls taking an edge = SUM(first_take).
import type { TimelineEntry } from '../repositories/timelines.ts';

export interface TransitionRow {
  seq: number;
  at: number;
  from_state: string | null;
  to_state: string;
  tool: string | null;
  first_visit: 0 | 1;
  first_take: 0 | 1;
}

/** What is known of a session's path before a batch: the transitions already stored. */
export type StoredTransition = Pick<TransitionRow, 'seq' | 'from_state' | 'to_state' | 'tool'>;

const edgeKey = (from: string | null, to: string, tool: string | null) => JSON.stringify([from, to, tool]);

/** The events a path is read from: a batch without them costs no read of the stored path. */
export const movesIn = (entries: readonly TimelineEntry[]): boolean =>
  entries.some((entry) => entry.type === 'flow_state' || entry.type === 'tool_call' || entry.type === 'tool_result');

/** The moves in one timeline batch, after those `stored` (oldest first); [] when it holds none. */
export function transitionsOf(stored: readonly StoredTransition[], entries: readonly TimelineEntry[]): TransitionRow[] {
  const visited = new Set<string>();
  const taken = new Set<string>();
  let last: string | null = null;
  let seq = 0;
  for (const row of stored) {
    visited.add(row.to_state);
    taken.add(edgeKey(row.from_state, row.to_state, row.tool));
    last = row.to_state;
    seq = Math.max(seq, Number(row.seq));
  }
  const out: TransitionRow[] = [];
  let pending: { tool: string; to: string } | null = null;
  for (const entry of entries) {
    if (entry.type !== 'flow_state' && entry.type !== 'tool_call' && entry.type !== 'tool_result') continue;
    let event: { state?: unknown; name?: unknown; status?: unknown; ok?: unknown; to_state?: unknown };
    try {
      event = JSON.parse(entry.data) as typeof event;
    } catch {
      continue;
    }
    if (entry.type === 'tool_call' || entry.type === 'tool_result') {
      const accepted = entry.type === 'tool_result' || event.status === 'accepted';
      if (accepted && typeof event.name === 'string' && typeof event.to_state === 'string') pending = { tool: event.name, to: event.to_state };
      continue;
    }
    if (typeof event.state !== 'string' || event.state === last) continue;
    const to = event.state;
    const tool = pending && pending.to === to ? pending.tool : null;
    const key = edgeKey(last, to, tool);
    out.push({ seq: ++seq, at: entry.at, from_state: last, to_state: to, tool, first_visit: visited.has(to) ? 0 : 1, first_take: taken.has(key) ? 0 : 1 });
    visited.add(to);
    taken.add(key);
    last = to;
    pending = null;
  }
  return out;
}
