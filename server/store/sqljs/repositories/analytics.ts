// The embedded store's (sql.js) flow traffic; the interface is ../../repositories/analytics.ts.
import type { Database } from '../database.ts';
import type { AnalyticsRepository } from '../../repositories/analytics.ts';
import { sqliteAnalyticsDialect, toFlowTraffic, trafficSql } from '../../rows/analytics-sql.ts';

export function createAnalyticsRepository(db: Database): AnalyticsRepository {
  const all = <Row>(build: (d: ReturnType<typeof sqliteAnalyticsDialect>) => string): Row[] => {
    const params: Array<string | number> = [];
    const sql = build(sqliteAnalyticsDialect(params));
    return db.all<Row>(sql, params);
  };
  return {
    async flowTraffic(flow, filter) {
      return toFlowTraffic(
        all((d) => trafficSql.success(flow, filter, d)),
        all((d) => trafficSql.transitions(flow, filter, d)),
        all((d) => trafficSql.ends(flow, filter, d)),
      );
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
