// The embedded store's (sql.js) flow traffic; the interface is ../../repositories/analytics.ts.
// Whole days are summed from the pre-counted rows (rows/traffic-tally.ts); the range's partial
// days and the calls still connected are counted from the sessions.
import type { Database } from '../database.ts';
import type { AnalyticsRepository } from '../../repositories/analytics.ts';
import { sqliteAnalyticsDialect, toFlowTraffic, trafficSql, type CountedFilter } from '../../rows/analytics-sql.ts';
import { daysSql, fromDayRows, mergeTrafficRows, splitRange, DAY_SECS, type DayRow, type TrafficRows } from '../../rows/traffic-tally.ts';

export function createAnalyticsRepository(db: Database): AnalyticsRepository {
  const all = <Row>(build: (d: ReturnType<typeof sqliteAnalyticsDialect>) => string): Row[] => {
    const params: Array<string | number> = [];
    const sql = build(sqliteAnalyticsDialect(params));
    return db.all<Row>(sql, params);
  };
  return {
    async flowTraffic(flow, filter) {
      const counted = (part: CountedFilter): TrafficRows => ({
        success: all((d) => trafficSql.success(flow, part, d)),
        transitions: all((d) => trafficSql.transitions(flow, part, d)),
        ends: part.connectedOnly ? [] : all((d) => trafficSql.ends(flow, part, d)),
      });
      const split = splitRange(filter);
      const parts: TrafficRows[] = [];
      if (split === null) parts.push(counted(filter));
      else {
        const params: Array<string | number> = [];
        const sql = daysSql(flow, filter, split.spans, (value) => (params.push(value), '?'));
        parts.push(fromDayRows(db.all<DayRow>(sql, params)));
        if (split.before) parts.push(counted(split.before));
        if (split.after) parts.push(counted(split.after));
        parts.push(counted({ ...filter, ...(split.firstDay !== null && { from: split.firstDay * DAY_SECS }), ...(split.endDay !== null && { to: split.endDay * DAY_SECS }), connectedOnly: true }));
      }
      const merged = mergeTrafficRows(parts);
      return toFlowTraffic(merged.success, merged.transitions, merged.ends);
    },

    async transitionSessions(flow, move, filter, limit, after) {
      const rows = all<{ id: string; created_at: number; started_at: number | null; duration_secs: number | null; success: string | null }>((d) =>
        trafficSql.transitionSessions(flow, move, filter, limit, after, d),
      );
      return rows.map((row) => ({
        id: row.id,
        createdAt: Number(row.created_at),
        startedAt: row.started_at === null ? null : Number(row.started_at),
        durationSecs: row.duration_secs === null ? null : Number(row.duration_secs),
        success: row.success as 'true' | 'false' | 'unknown' | null,
      }));
    },
  };
}
