// Session analyses on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/analyses.ts). A claim is one conditional UPDATE, so two nodes never both take
// one; a dead node's claim is taken once it runs out.
import type { AnalysesRepository, AnalysisSuccess } from '../repositories/analyses.ts';
import { ANALYSIS_COLUMNS, outcomeValues, toAnalysis, type AnalysisRow } from '../rows/analyses.ts';
import type { PgDatabase } from './database.ts';
import { retallied } from './traffic-tally.ts';

export function createPgAnalysesRepository(db: PgDatabase, node: { id: string }): AnalysesRepository {
  return {
    async open(sessionId, accountId, state) {
      await db.run('INSERT INTO session_analyses (session_id, account_id, state, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (session_id) DO NOTHING', [sessionId, accountId, state, db.now()]);
    },

    async claim(sessionId, until) {
      const row = await db.row<{ session_id: string }>(
        `UPDATE session_analyses SET claimed_by = $1, claimed_until = $2
         WHERE session_id = $3 AND state = 'pending' AND (claimed_by IS NULL OR claimed_by = $1 OR claimed_until <= $4)
         RETURNING session_id`,
        [node.id, until, sessionId, db.now()],
      );
      return row !== null;
    },

    async complete(sessionId, result, success, deliveries) {
      const now = db.now();
      return db.transaction(async (tx) => {
        // The success moves the ended session's counts in its flow's traffic to that success.
        const done = await retallied(tx, sessionId, () =>
          tx.row<{ session_id: string }>(
            `UPDATE session_analyses SET state = 'done', success = $1, result = $2, done_at = $3, claimed_until = NULL
             WHERE session_id = $4 AND state = 'pending' RETURNING session_id`,
            [success, JSON.stringify(result), now, sessionId],
          ),
        );
        if (!done) return false;
        for (const d of deliveries) {
          await tx.run(
            `INSERT INTO webhook_deliveries (id, webhook_id, account_id, session_id, event_type, payload, created_at, status, attempts, next_attempt_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $7)`,
            [d.id, d.webhookId, d.accountId, d.sessionId, d.eventType, d.payload, d.createdAt],
          );
        }
        return true;
      });
    },

    async get(sessionId) {
      const row = await db.row<AnalysisRow>(`SELECT ${ANALYSIS_COLUMNS} FROM session_analyses WHERE session_id = $1`, [sessionId]);
      return row ? toAnalysis(row) : null;
    },

    async successOf(sessionIds) {
      const found = new Map<string, AnalysisSuccess>();
      if (sessionIds.length === 0) return found;
      const rows = await db.rows<{ session_id: string; success: string }>('SELECT session_id, success FROM session_analyses WHERE success IS NOT NULL AND session_id = ANY($1::text[])', [
        [...sessionIds],
      ]);
      for (const row of rows) found.set(row.session_id, row.success as AnalysisSuccess);
      return found;
    },

    async outcomesOf(sessionIds) {
      if (sessionIds.length === 0) return new Map();
      const rows = await db.rows<{ session_id: string; result: string }>(
        "SELECT session_id, result FROM session_analyses WHERE state = 'done' AND result IS NOT NULL AND session_id = ANY($1::text[])",
        [[...sessionIds]],
      );
      return outcomeValues(rows);
    },

    async unfinished(since, limit, unopened) {
      const pending = `SELECT session_id AS id, created_at AS at FROM session_analyses
                       WHERE state = 'pending' AND (claimed_by IS NULL OR claimed_until <= $1)`;
      const missing = `SELECT s.id AS id, s.ended_at AS at FROM sessions s
                       WHERE s.status = 'ended' AND s.flow_id IS NOT NULL AND s.ended_at > $3
                         AND NOT EXISTS (SELECT 1 FROM session_analyses a WHERE a.session_id = s.id)`;
      const rows = await db.rows<{ id: string }>(
        `SELECT id FROM (${pending}${unopened ? ` UNION ALL ${missing}` : ''}) AS left_over ORDER BY at LIMIT $2`,
        unopened ? [db.now(), limit, since] : [db.now(), limit],
      );
      return rows.map((row) => row.id);
    },
  };
}
