// The flow traffic's queries from the sessions themselves (repositories/analytics.ts; whole days
// are read from rows/traffic-tally.ts instead) as SQL for both stores: the same
// statements with each store's placeholders and JSON functions. Every count is one GROUP BY over
// the flow's sessions in the time range (read by the sessions_by_account_flow index) joined to their
// moves by session_transitions' primary key; the analyses are joined only when a count or a
// filter reads them.
import type { FlowRef, TrafficFilter } from '../repositories/analytics.ts';

export interface AnalyticsDialect {
  /** Adds a parameter and returns its placeholder. */
  param(value: string | number): string;
  /** The analysed outcome's field (a parameter) of session_analyses `a`, as text; booleans as true/false. */
  outcomeText(field: string): string;
}

/**
 * The WHERE conditions on `sessions s` (and `session_analyses a`, LEFT JOINed) of one flow's counted
 * sessions. Every filter is a condition on the session's own row or its analysis, so a filter by
 * another column of sessions (an experiment's arm) is one more line here.
 */
export function trafficConditions(flow: FlowRef, filter: CountedFilter, d: AnalyticsDialect): string {
  const where = [`s.account_id = ${d.param(flow.accountId)}`, `s.flow_id = ${d.param(flow.flowId)}`, filter.connectedOnly ? `s.status = 'connected'` : `s.status <> 'created'`];
  if (filter.from !== undefined) where.push(`s.created_at >= ${d.param(filter.from)}`);
  if (filter.to !== undefined) where.push(`s.created_at < ${d.param(filter.to)}`);
  if (filter.version === 'draft') where.push('s.flow_draft = 1');
  else if (filter.version !== undefined) where.push(`s.flow_version = ${d.param(filter.version)} AND s.flow_draft = 0`);
  else where.push('s.flow_draft = 0');
  if (filter.success !== undefined) where.push(`a.success = ${d.param(filter.success)}`);
  if (filter.outcome !== undefined) where.push(`a.state = 'done' AND ${d.outcomeText(filter.outcome.field)} = ${d.param(filter.outcome.value)}`);
  if (filter.experiment !== undefined) where.push(`s.experiment_id = ${d.param(filter.experiment)}`);
  if (filter.arm !== undefined) where.push(`s.experiment_arm = ${d.param(filter.arm)}`);
  return where.join(' AND ');
}

/**
 * A filter, or only its calls still connected: the ended ones are in the pre-counted rows
 * (rows/traffic-tally.ts); the connected ones are read by the sessions_live_by_flow index.
 */
export type CountedFilter = TrafficFilter & { connectedOnly?: boolean };

const needsAnalyses = (filter: TrafficFilter) => filter.success !== undefined || filter.outcome !== undefined;

/** `sessions s`, with its analysis `a` when asked or when a filter reads it. */
const sessionsFrom = (filter: TrafficFilter, analyses = false) =>
  analyses || needsAnalyses(filter) ? 'sessions s LEFT JOIN session_analyses a ON a.session_id = s.id' : 'sessions s';

export const trafficSql = {
  /** calls; and per success value (none for no analysed success): one row per value. */
  success: (flow: FlowRef, filter: CountedFilter, d: AnalyticsDialect) =>
    `SELECT COALESCE(a.success, 'none') AS success, COUNT(*) AS n
     FROM ${sessionsFrom(filter, true)}
     WHERE ${trafficConditions(flow, filter, d)}
     GROUP BY COALESCE(a.success, 'none')`,

  /** Per move: the calls that took it (first_take) and how often (rows), and calls reaching `to` through it first. */
  transitions: (flow: FlowRef, filter: CountedFilter, d: AnalyticsDialect) =>
    `SELECT t.from_state, t.to_state, t.tool, SUM(t.first_take) AS calls, COUNT(*) AS times, SUM(t.first_visit) AS reached
     FROM ${sessionsFrom(filter)} JOIN session_transitions t ON t.session_id = s.id
     WHERE ${trafficConditions(flow, filter, d)}
     GROUP BY t.from_state, t.to_state, t.tool`,

  /** Ended calls per last state and end reason. */
  ends: (flow: FlowRef, filter: CountedFilter, d: AnalyticsDialect) =>
    `SELECT s.last_state, s.end_reason, COUNT(*) AS n
     FROM ${sessionsFrom(filter)}
     WHERE ${trafficConditions(flow, filter, d)} AND s.status = 'ended'
     GROUP BY s.last_state, s.end_reason`,

  /** A page of the sessions that took a move, newest first. */
  transitionSessions: (
    flow: FlowRef,
    move: { from: string | null; to: string },
    filter: TrafficFilter,
    limit: number,
    after: { createdAt: number; id: string } | null,
    d: AnalyticsDialect,
  ) => {
    const where = [trafficConditions(flow, filter, d)];
    const took =
      move.from === null
        ? `t.from_state IS NULL AND t.to_state = ${d.param(move.to)}`
        : `t.from_state = ${d.param(move.from)} AND t.to_state = ${d.param(move.to)}`;
    where.push(`EXISTS (SELECT 1 FROM session_transitions t WHERE t.session_id = s.id AND ${took})`);
    if (after) where.push(`(s.created_at < ${d.param(after.createdAt)} OR (s.created_at = ${d.param(after.createdAt)} AND s.id < ${d.param(after.id)}))`);
    return `SELECT s.id, s.created_at, s.started_at, s.duration_secs, a.success
            FROM ${sessionsFrom(filter, true)}
            WHERE ${where.join(' AND ')}
            ORDER BY s.created_at DESC, s.id DESC
            LIMIT ${d.param(limit)}`;
  },
};

/** sql.js: `?` placeholders, positional, so parameters are added in the order they appear. */
export function sqliteAnalyticsDialect(params: Array<string | number>): AnalyticsDialect {
  const param = (value: string | number) => (params.push(value), '?');
  return {
    param,
    outcomeText: (field) => {
      const path = param(`$.outcome.values.${JSON.stringify(field)}`);
      // json_extract answers 1/0 for JSON true/false; PostgreSQL's ->> answers true/false.
      return `(CASE json_type(a.result, ${path}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(json_extract(a.result, ${param(`$.outcome.values.${JSON.stringify(field)}`)}) AS TEXT) END)`;
    },
  };
}

/** PostgreSQL: `$n` placeholders. */
export function postgresAnalyticsDialect(params: unknown[]): AnalyticsDialect {
  const param = (value: string | number) => (params.push(value), `$${params.length}`);
  return { param, outcomeText: (field) => `((a.result::jsonb -> 'outcome' -> 'values') ->> ${param(field)}::text)` };
}

interface TransitionAggregate {
  from_state: string | null;
  to_state: string;
  tool: string | null;
  calls: number | string;
  times: number | string;
  reached: number | string;
}

/** The rows of the three counts as the repository answers them (counts arrive as strings from pg's bigint). */
export function toFlowTraffic(
  successRows: Array<{ success: string; n: number | string }>,
  transitionRows: TransitionAggregate[],
  endRows: Array<{ last_state: string | null; end_reason: string | null; n: number | string }>,
) {
  const success = { true: 0, false: 0, unknown: 0, none: 0 };
  for (const row of successRows) {
    const key = row.success === 'true' || row.success === 'false' || row.success === 'unknown' ? row.success : 'none';
    success[key] += Number(row.n);
  }
  const reached = new Map<string, number>();
  for (const row of transitionRows) reached.set(row.to_state, (reached.get(row.to_state) ?? 0) + Number(row.reached));
  const byCount = <T extends { calls: number }>(a: T, b: T) => b.calls - a.calls;
  return {
    calls: success.true + success.false + success.unknown + success.none,
    states: [...reached].map(([state, calls]) => ({ state, calls })).sort(byCount),
    transitions: transitionRows
      .map((row) => ({ from: row.from_state, to: row.to_state, tool: row.tool, calls: Number(row.calls), times: Number(row.times) }))
      .sort(byCount),
    ends: endRows.map((row) => ({ state: row.last_state, reason: row.end_reason ?? 'unknown', calls: Number(row.n) })).sort(byCount),
    success,
  };
}
