// The flow traffic's pre-counted rows (flow_traffic_days), so GET /v1/analytics/flows/{id} sums a
// few rows per day instead of grouping every session of the range (docs/api.md#analytics).
//
// A row holds what the ended sessions of one flow, created on one UTC day (span 1) or in one block
// of 16 days (span 16, day = the block's first; day numbers count from 1970-01-01), with one published
// version or the draft, one experiment and arm and one analysed success, add to the traffic:
// kind 'call' (the calls), 'move' (a = from, b = to, c = tool: calls that took it, times taken,
// calls that reached b through it first) or 'end' (a = last state, b = end reason: calls). NULLs
// are stored as '' (0 for a number), since a primary key column cannot hold NULL.
//
// A session is counted here from the moment it ends, in the same transaction as the write that
// ends it; a write that changes an ended session's counts (a late timeline batch with moves, its
// analysis) takes the session's counts out and puts them back in that write's transaction, under
// the session's row lock on PostgreSQL. So nothing is lost across a crash, a retried end (already
// ended: out and in again) counts once, and two nodes never count one session twice. Calls not
// ended yet (status 'connected') are counted from their own rows when asked
// (repositories/analytics.ts), as are the partial days at a range's edges.
import type { TrafficFilter } from '../repositories/analytics.ts';

export const DAY_SECS = 86_400;
/**
 * The days one block row sums, so a long range reads a few rows per 16 days and a day's rows only
 * at its ends: every count is added to its day's row and its block's.
 */
export const BLOCK_DAYS = 16;

export type TallyDialect = 'sqlite' | 'pg';

// The table is made by migration 20 (sqljs/migrations.ts, postgres/migrations.ts).
const COLUMNS = 'account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c, calls, times, reached';
const KEY = 'account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c';

const dayOf = (dialect: TallyDialect) => (dialect === 'pg' ? 'floor(s.created_at / 86400)::bigint' : 'CAST(s.created_at / 86400 AS INTEGER)');

/**
 * The statements that add (sign 1) or take out (sign -1) the counts of the ended sessions that
 * `where` (a condition on `sessions s`, with the caller's placeholders) selects. Each statement
 * uses `where` once, so each takes the same parameters.
 */
export function tallySql(sign: 1 | -1, where: string, dialect: TallyDialect): string[] {
  return [1, BLOCK_DAYS].flatMap((span) => tallySpanSql(sign, where, dialect, span));
}

function tallySpanSql(sign: 1 | -1, where: string, dialect: TallyDialect, span: number): string[] {
  const day = span === 1 ? dayOf(dialect) : `(${dayOf(dialect)} / ${span}) * ${span}`;
  const dims = `s.account_id, s.flow_id, ${span}, ${day}, COALESCE(s.flow_version, 0), s.flow_draft, COALESCE(s.experiment_id, ''), COALESCE(s.experiment_arm, 0), COALESCE(a.success, 'none')`;
  const from = `sessions s LEFT JOIN session_analyses a ON a.session_id = s.id`;
  const counted = `(${where}) AND s.status = 'ended' AND s.flow_id IS NOT NULL`;
  const upsert = `ON CONFLICT (${KEY}) DO UPDATE SET calls = flow_traffic_days.calls + excluded.calls,
                    times = flow_traffic_days.times + excluded.times, reached = flow_traffic_days.reached + excluded.reached`;
  return [
    `INSERT INTO flow_traffic_days (${COLUMNS})
     SELECT ${dims}, 'call', '', '', '', ${sign} * COUNT(*), 0, 0
     FROM ${from} WHERE ${counted}
     GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
     ${upsert}`,
    `INSERT INTO flow_traffic_days (${COLUMNS})
     SELECT ${dims}, 'move', COALESCE(t.from_state, ''), t.to_state, COALESCE(t.tool, ''), ${sign} * SUM(t.first_take), ${sign} * COUNT(*), ${sign} * SUM(t.first_visit)
     FROM ${from} JOIN session_transitions t ON t.session_id = s.id WHERE ${counted}
     GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13
     ${upsert}`,
    `INSERT INTO flow_traffic_days (${COLUMNS})
     SELECT ${dims}, 'end', COALESCE(s.last_state, ''), COALESCE(s.end_reason, ''), '', ${sign} * COUNT(*), 0, 0
     FROM ${from} WHERE ${counted}
     GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12
     ${upsert}`,
  ];
}

/** The rows a session's counts were taken out of and left at zero (its day's and block's other rows stay). */
export const emptiedRowsSql = (p: (n: number) => string) =>
  `DELETE FROM flow_traffic_days WHERE account_id = ${p(1)} AND flow_id = ${p(2)}
     AND ((span = 1 AND day = ${p(3)}) OR (span = ${BLOCK_DAYS} AND day = ${p(4)})) AND calls = 0 AND times = 0 AND reached = 0`;

/** The parameters 3 and 4 of emptiedRowsSql: a session's day and its block's first day. */
export const emptiedDays = (createdAt: number) => {
  const day = dayNumber(createdAt);
  return [day, Math.floor(day / BLOCK_DAYS) * BLOCK_DAYS];
};

/** Counts in every ended session (as migration 20 did for the sessions before it); for sessions written straight into the tables. */
export const tallyAllSql = (dialect: TallyDialect) => tallySql(1, '1 = 1', dialect);

/** What a session's counts are keyed by, read (and locked on PostgreSQL) before it changes. */
export interface TalliedSession {
  status: string;
  account_id: string;
  flow_id: string | null;
  created_at: number;
}

export const isTallied = (row: TalliedSession | null | undefined): row is TalliedSession & { flow_id: string } =>
  row != null && row.status === 'ended' && row.flow_id !== null;

export const dayNumber = (createdAt: number) => Math.floor(Number(createdAt) / DAY_SECS);

/** Whole days [from, to) of one span's rows (null: unbounded). */
export interface SpanRange {
  span: number;
  from: number | null;
  to: number | null;
}

/**
 * How a filter's range splits: whole blocks and whole days read from the pre-counted rows, and
 * the edges before and after the whole days counted from the sessions, as are the calls still
 * connected within the whole days. null: the range holds no whole day (or a filter the rows do
 * not keep, an outcome field), so all of it is counted from the sessions.
 */
export function splitRange(filter: TrafficFilter): { firstDay: number | null; endDay: number | null; spans: SpanRange[]; before: TrafficFilter | null; after: TrafficFilter | null } | null {
  if (filter.outcome !== undefined) return null;
  const firstDay = filter.from === undefined ? null : Math.ceil(filter.from / DAY_SECS);
  const endDay = filter.to === undefined ? null : Math.floor(filter.to / DAY_SECS);
  if (firstDay !== null && endDay !== null && firstDay >= endDay) return null;
  const before = filter.from !== undefined && firstDay !== null && filter.from < firstDay * DAY_SECS ? { ...filter, to: firstDay * DAY_SECS } : null;
  const after = filter.to !== undefined && endDay !== null && endDay * DAY_SECS < filter.to ? { ...filter, from: endDay * DAY_SECS } : null;
  const firstBlock = firstDay === null ? null : Math.ceil(firstDay / BLOCK_DAYS) * BLOCK_DAYS;
  const endBlock = endDay === null ? null : Math.floor(endDay / BLOCK_DAYS) * BLOCK_DAYS;
  const spans: SpanRange[] =
    firstBlock !== null && endBlock !== null && firstBlock >= endBlock
      ? [{ span: 1, from: firstDay, to: endDay }]
      : [
          { span: BLOCK_DAYS, from: firstBlock, to: endBlock },
          ...(firstDay !== null && firstDay < firstBlock! ? [{ span: 1, from: firstDay, to: firstBlock }] : []),
          ...(endDay !== null && endBlock! < endDay ? [{ span: 1, from: endBlock, to: endDay }] : []),
        ];
  return { firstDay, endDay, spans, before, after };
}

/** The pre-counted rows' sums over whole blocks and days, with the filter's other conditions. */
export function daysSql(flow: { accountId: string; flowId: string }, filter: TrafficFilter, spans: SpanRange[], param: (value: string | number) => string): string {
  const parts = spans.map((range) => {
    const where = [`account_id = ${param(flow.accountId)}`, `flow_id = ${param(flow.flowId)}`, `span = ${param(range.span)}`];
    if (range.from !== null) where.push(`day >= ${param(range.from)}`);
    if (range.to !== null) where.push(`day < ${param(range.to)}`);
    if (filter.version === 'draft') where.push('flow_draft = 1');
    else if (filter.version !== undefined) where.push(`flow_version = ${param(filter.version)} AND flow_draft = 0`);
    else where.push('flow_draft = 0');
    if (filter.success !== undefined) where.push(`success = ${param(filter.success)}`);
    if (filter.experiment !== undefined) where.push(`experiment_id = ${param(filter.experiment)}`);
    if (filter.arm !== undefined) where.push(`experiment_arm = ${param(filter.arm)}`);
    return `SELECT kind, CASE WHEN kind = 'call' THEN success ELSE '' END AS success, a, b, c, calls, times, reached FROM flow_traffic_days WHERE ${where.join(' AND ')}`;
  });
  return `SELECT kind, success, a, b, c, SUM(calls) AS calls, SUM(times) AS times, SUM(reached) AS reached
          FROM (${parts.join(' UNION ALL ')}) r
          GROUP BY kind, success, a, b, c`;
}

export interface DayRow {
  kind: string;
  success: string;
  a: string;
  b: string;
  c: string;
  calls: number | string;
  times: number | string;
  reached: number | string;
}

export interface TrafficRows {
  success: Array<{ success: string; n: number | string }>;
  transitions: Array<{ from_state: string | null; to_state: string; tool: string | null; calls: number | string; times: number | string; reached: number | string }>;
  ends: Array<{ last_state: string | null; end_reason: string | null; n: number | string }>;
}

/** The pre-counted rows as the three counts' rows; rows left at zero by a session taken out are none. */
export function fromDayRows(rows: DayRow[]): TrafficRows {
  const out: TrafficRows = { success: [], transitions: [], ends: [] };
  for (const row of rows) {
    const calls = Number(row.calls);
    if (row.kind === 'call') {
      if (calls !== 0) out.success.push({ success: row.success, n: calls });
    } else if (row.kind === 'move') {
      if (Number(row.times) !== 0) out.transitions.push({ from_state: row.a === '' ? null : row.a, to_state: row.b, tool: row.c === '' ? null : row.c, calls, times: Number(row.times), reached: Number(row.reached) });
    } else if (row.kind === 'end' && calls !== 0) {
      out.ends.push({ last_state: row.a === '' ? null : row.a, end_reason: row.b === '' ? null : row.b, n: calls });
    }
  }
  return out;
}

/** Several parts' rows as one: a move or an end counted in two parts is one row with their sums. */
export function mergeTrafficRows(parts: TrafficRows[]): TrafficRows {
  const moves = new Map<string, TrafficRows['transitions'][number]>();
  const ends = new Map<string, TrafficRows['ends'][number]>();
  const success: TrafficRows['success'] = [];
  for (const part of parts) {
    success.push(...part.success);
    for (const row of part.transitions) {
      const key = JSON.stringify([row.from_state, row.to_state, row.tool]);
      const seen = moves.get(key);
      if (seen) moves.set(key, { ...seen, calls: Number(seen.calls) + Number(row.calls), times: Number(seen.times) + Number(row.times), reached: Number(seen.reached) + Number(row.reached) });
      else moves.set(key, row);
    }
    for (const row of part.ends) {
      const key = JSON.stringify([row.last_state, row.end_reason]);
      const seen = ends.get(key);
      ends.set(key, seen ? { ...seen, n: Number(seen.n) + Number(row.n) } : row);
    }
  }
  return { success, transitions: [...moves.values()], ends: [...ends.values()] };
}
