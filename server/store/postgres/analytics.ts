// The flow traffic on PostgreSQL: the same queries as on sql.js (../rows/analytics-sql.ts), the
// three counts sent at once.
import type { AnalyticsRepository } from '../repositories/analytics.ts';
import type { PgDatabase } from './database.ts';
import { postgresAnalyticsDialect, toFlowTraffic, trafficSql } from '../rows/analytics-sql.ts';

export function createPgAnalyticsRepository(db: PgDatabase): AnalyticsRepository {
  const rows = <Row>(build: (d: ReturnType<typeof postgresAnalyticsDialect>) => string): Promise<Row[]> => {
    const params: unknown[] = [];
    const sql = build(postgresAnalyticsDialect(params));
    return db.rows<Row>(sql, params);
  };
  return {
    async flowTraffic(flow, filter) {
      const [success, transitions, ends] = await Promise.all([
        rows<{ success: string; n: string }>((d) => trafficSql.success(flow, filter, d)),
        rows<Parameters<typeof toFlowTraffic>[1][number]>((d) => trafficSql.transitions(flow, filter, d)),
        rows<{ last_state: string | null; end_reason: string | null; n: string }>((d) => trafficSql.ends(flow, filter, d)),
      ]);
      return toFlowTraffic(success, transitions, ends);
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
