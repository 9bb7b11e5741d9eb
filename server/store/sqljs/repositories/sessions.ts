// The embedded store's (sql.js) sessions repository; its interface and types are in ../../repositories/sessions.ts.
import type { Database } from '../database.ts';
import type { WriteTransaction } from '../write-transaction.ts';
import { SessionCapReachedError } from '../../errors.ts';
import type { Session, SessionNode, SessionsRepository } from '../../repositories/sessions.ts';
import type { SessionRow } from '../../rows/sessions.ts';
import { connectedSession, createdSession, toSession } from '../../rows/sessions.ts';

const INSERT_SQL = `INSERT INTO sessions
  (id, account_id, flow_id, token_hash, token_prefix, transport, mode, context_json, metadata_json,
   status, created_at, expires_at, started_at, api_key_id, record, flow_version, flow_draft, node_id)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export function createSessionsRepository(db: Database, node: SessionNode): SessionsRepository {
  /**
   * Inside the write that just connected a session of the account: throws (so the write rolls
   * back and nothing is journaled) when that took the account past its cap, this one included.
   */
  const refuseOverCap = (tx: WriteTransaction, accountId: string): void => {
    if (node.sessionsPerAccount <= 0) return;
    const live = tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions WHERE account_id = ? AND status = 'connected'`, [accountId])!.n;
    if (live > node.sessionsPerAccount) throw new SessionCapReachedError(node.sessionsPerAccount);
  };

  const findById = (id: string): Session | null => {
    const row = db.get<SessionRow>('SELECT * FROM sessions WHERE id = ?', [id]);
    return row ? toSession(row) : null;
  };

  const insert = (session: Session, apiKeyId: string | null = null): Promise<Session> =>
    db.write((tx) => {
      tx.run(INSERT_SQL, [
        session.id,
        session.accountId,
        session.flowId,
        session.tokenHash,
        session.tokenPrefix,
        session.transport,
        session.mode,
        JSON.stringify(session.context),
        JSON.stringify(session.metadata),
        session.status,
        session.createdAt,
        session.expiresAt,
        session.startedAt,
        apiKeyId,
        session.record ? 1 : 0,
        session.flowVersion,
        session.flowDraft ? 1 : 0,
        session.status === 'connected' ? node.id : null,
      ]);
      if (session.status === 'connected') refuseOverCap(tx, session.accountId);
      return session;
    });

  return {
    create(input) {
      return insert(createdSession(input, db.now()), input.apiKeyId ?? null);
    },

    createConnected(input) {
      return insert(connectedSession(input, db.now()));
    },

    findById: async (id) => findById(id),

    async findByTokenHash(tokenHash) {
      const row = db.get<SessionRow>('SELECT * FROM sessions WHERE token_hash = ?', [tokenHash]);
      return row ? toSession(row) : null;
    },

    claim(tokenHash, now) {
      return db.write((tx) => {
        const claimed = tx.run(
          `UPDATE sessions SET status = 'connected', started_at = ?, node_id = ?
           WHERE token_hash = ? AND status = 'created' AND expires_at > ?`,
          [now, node.id, tokenHash, now],
        );
        if (claimed !== 1) return null;
        const row = tx.get<SessionRow>('SELECT * FROM sessions WHERE token_hash = ?', [tokenHash]);
        if (!row) return null;
        // Past the cap the claim is rolled back: the token stays good.
        refuseOverCap(tx, row.account_id);
        return toSession(row);
      });
    },

    end(id, { endedAt, reason, creditsChargedCents, durationSecs }) {
      if (!Number.isSafeInteger(creditsChargedCents) || creditsChargedCents < 0) {
        return Promise.reject(new RangeError(`creditsChargedCents must be whole cents; got ${creditsChargedCents}`));
      }
      if (durationSecs !== undefined && (!Number.isSafeInteger(durationSecs) || durationSecs < 0)) {
        return Promise.reject(new RangeError(`durationSecs must be whole seconds; got ${durationSecs}`));
      }
      return db.write((tx) => {
        // A duration the session measured is stored as it is: recomputing it here from another
        // clock's timestamps would round differently from the session_ended event near a half
        // second. A session that never connected ran for no time; its started_at stays null.
        tx.run(
          `UPDATE sessions SET status = 'ended', ended_at = ?, end_reason = ?, credits_charged_cents = ?,
             duration_secs = CASE WHEN ? IS NOT NULL THEN ?
                                  WHEN started_at IS NULL THEN 0
                                  ELSE MAX(0, CAST(ROUND(? - started_at) AS INTEGER)) END
           WHERE id = ? AND status != 'ended'`,
          [endedAt, reason, creditsChargedCents, durationSecs ?? null, durationSecs ?? null, endedAt, id],
        );
        return findById(id);
      });
    },

    endInterrupted() {
      return db.write((tx) => {
        const ids = tx.all<{ id: string }>(`SELECT id FROM sessions WHERE status = 'connected'`, []).map((row) => row.id);
        for (const id of ids) {
          tx.run(
            `UPDATE sessions SET status = 'ended', end_reason = 'server_restarted',
               ended_at = MAX(COALESCE(started_at, created_at),
                              COALESCE((SELECT MAX(at) FROM session_events WHERE session_id = sessions.id), 0)),
               credits_charged_cents = COALESCE((SELECT -SUM(delta_cents) FROM credit_ledger
                                                 WHERE session_id = sessions.id AND delta_cents < 0), 0)
             WHERE id = ?`,
            [id],
          );
          tx.run(
            `UPDATE sessions SET duration_secs = MAX(0, CAST(ROUND(ended_at - COALESCE(started_at, ended_at)) AS INTEGER)) WHERE id = ?`,
            [id],
          );
        }
        return ids;
      });
    },

    async listRecent(accountId, limit = 50) {
      return db
        .all<SessionRow>('SELECT * FROM sessions WHERE account_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?', [
          accountId,
          limit,
        ])
        .map(toSession);
    },

    async setRecordingFile(id, file) {
      await db.write((tx) => tx.run('UPDATE sessions SET recording_file = ? WHERE id = ?', [file, id]));
    },

    async setFlowVersion(id, version, draft) {
      await db.write((tx) => tx.run('UPDATE sessions SET flow_version = ?, flow_draft = ? WHERE id = ?', [version, draft ? 1 : 0, id]));
    },
  };
}

