// The embedded store's (sql.js) session analyses; the interface is ../../repositories/analyses.ts.
import type { Database } from '../database.ts';
import type { AnalysesRepository, AnalysisSuccess } from '../../repositories/analyses.ts';
import { retallied } from '../traffic-tally.ts';
import { ANALYSIS_COLUMNS, outcomeValues, toAnalysis, type AnalysisRow } from '../../rows/analyses.ts';

export function createAnalysesRepository(db: Database, node: { id: string }): AnalysesRepository {
  return {
    async open(sessionId, accountId, state) {
      await db.write((tx) =>
        tx.run('INSERT INTO session_analyses (session_id, account_id, state, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING', [sessionId, accountId, state, db.now()]),
      );
    },

    claim(sessionId, until) {
      // One process holds the data dir: a claim of another node id was left by an earlier run.
      return db.write(
        (tx) => tx.run("UPDATE session_analyses SET claimed_by = ?, claimed_until = ? WHERE session_id = ? AND state = 'pending'", [node.id, until, sessionId]) === 1,
      );
    },

    complete(sessionId, result, success, deliveries) {
      const now = db.now();
      return db.write((tx) => {
        // The success moves the ended session's counts in its flow's traffic to that success.
        const done = retallied(tx, sessionId, () =>
          tx.run("UPDATE session_analyses SET state = 'done', success = ?, result = ?, done_at = ?, claimed_until = NULL WHERE session_id = ? AND state = 'pending'", [
            success,
            JSON.stringify(result),
            now,
            sessionId,
          ]),
        );
        if (done !== 1) return false;
        for (const d of deliveries) {
          tx.run(
            `INSERT INTO webhook_deliveries (id, webhook_id, account_id, session_id, event_type, payload, created_at, status, attempts, next_attempt_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)`,
            [d.id, d.webhookId, d.accountId, d.sessionId, d.eventType, d.payload, d.createdAt, d.createdAt],
          );
        }
        return true;
      });
    },

    async get(sessionId) {
      const row = db.get<AnalysisRow>(`SELECT ${ANALYSIS_COLUMNS} FROM session_analyses WHERE session_id = ?`, [sessionId]);
      return row ? toAnalysis(row) : null;
    },

    async successOf(sessionIds) {
      const found = new Map<string, AnalysisSuccess>();
      if (sessionIds.length === 0) return found;
      const rows = db.all<{ session_id: string; success: string }>(
        `SELECT session_id, success FROM session_analyses WHERE success IS NOT NULL AND session_id IN (${sessionIds.map(() => '?').join(', ')})`,
        [...sessionIds],
      );
      for (const row of rows) found.set(row.session_id, row.success as AnalysisSuccess);
      return found;
    },

    async outcomesOf(sessionIds) {
      if (sessionIds.length === 0) return new Map();
      const rows = db.all<{ session_id: string; result: string }>(
        `SELECT session_id, result FROM session_analyses WHERE state = 'done' AND result IS NOT NULL AND session_id IN (${sessionIds.map(() => '?').join(', ')})`,
        [...sessionIds],
      );
      return outcomeValues(rows);
    },

    async unfinished(since, limit, unopened) {
      // One process holds the data dir: a claim of another node id was left by an earlier run.
      const pending = `SELECT session_id AS id, created_at AS at FROM session_analyses
                       WHERE state = 'pending' AND (claimed_by IS NULL OR claimed_by <> ? OR claimed_until <= ?)`;
      const params: Array<string | number> = [node.id, db.now()];
      const missing = `SELECT s.id AS id, s.ended_at AS at FROM sessions s
                       WHERE s.status = 'ended' AND s.flow_id IS NOT NULL AND s.ended_at > ?
                         AND NOT EXISTS (SELECT 1 FROM session_analyses a WHERE a.session_id = s.id)`;
      if (unopened) params.push(since);
      params.push(limit);
      return db.all<{ id: string }>(`SELECT id FROM (${pending}${unopened ? ` UNION ALL ${missing}` : ''}) ORDER BY at LIMIT ?`, params).map((row) => row.id);
    },
  };
}
