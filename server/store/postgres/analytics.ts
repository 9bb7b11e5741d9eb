// The flow traffic on PostgreSQL: the same queries as on sql.js (../rows/analytics-sql.ts), the
// counts sent at once: whole days summed from the pre-counted rows (rows/traffic-tally.ts), the
// range's partial days and the calls still connected counted from the sessions.
import type { AnalyticsRepository } from '../repositories/analytics.ts';
import type { PgDatabase } from './database.ts';
import { postgresAnalyticsDialect, toFlowTraffic, trafficSql, type CountedFilter } from '../rows/analytics-sql.ts';
import { DAY_SECS, daysSql, fromDayRows, mergeTrafficRows, splitRange, type DayRow, type TrafficRows } from '../rows/traffic-tally.ts';

export function createPgAnalyticsRepository(db: PgDatabase): AnalyticsRepository {
  const rows = <Row>(build: (d: ReturnType<typeof postgresAnalyticsDialect>) => string): Promise<Row[]> => {
    const params: unknown[] = [];
    const sql = build(postgresAnalyticsDialect(params));
    return db.rows<Row>(sql, params);
  };
  return {
    async flowTraffic(flow, filter) {
      const counted = async (part: CountedFilter): Promise<TrafficRows> => {
        const [success, transitions, ends] = await Promise.all([
          rows<TrafficRows['success'][number]>((d) => trafficSql.success(flow, part, d)),
          rows<TrafficRows['transitions'][number]>((d) => trafficSql.transitions(flow, part, d)),
          part.connectedOnly ? [] : rows<TrafficRows['ends'][number]>((d) => trafficSql.ends(flow, part, d)),
        ]);
        return { success, transitions, ends };
      };
      const split = splitRange(filter);
      const parts: Array<Promise<TrafficRows>> = [];
      if (split === null) parts.push(counted(filter));
      else {
        const params: unknown[] = [];
        const sql = daysSql(flow, filter, split.spans, (value) => (params.push(value), `$${params.length}`));
        parts.push(db.rows<DayRow>(sql, params).then(fromDayRows));
        if (split.before) parts.push(counted(split.before));
        if (split.after) parts.push(counted(split.after));
        parts.push(counted({ ...filter, ...(split.firstDay !== null && { from: split.firstDay * DAY_SECS }), ...(split.endDay !== null && { to: split.endDay * DAY_SECS }), connectedOnly: true }));
      }
      const merged = mergeTrafficRows(await Promise.all(parts));
      return toFlowTraffic(merged.success, merged.transitions, merged.ends);
    },

    async transitionSessions(flow, move, filter, limit, after) {
      const found = await rows<{ id: string; created_at: number; started_at: number | null; duration_secs: number | string | null; success: string | null }>((d) =>
        trafficSql.transitionSessions(flow, move, filter, limit, after, d),
      );
      return found.map((row) => ({
        id: row.id,
        createdAt: Number(row.created_at),
        startedAt: row.started_at === null ? null : Number(row.started_at),
        durationSecs: row.duration_secs === null ? null : Number(row.duration_secs),
        success: row.success as 'true' | 'false' | 'unknown' | null,
      }));
    },
  };
}
