// The embedded store's (sql.js) sessions repository; its interface and types are in ../../repositories/sessions.ts.
import type { Database } from '../database.ts';
import type { WriteTransaction } from '../write-transaction.ts';
import { CarrierCallTakenError, SessionCapReachedError } from '../../errors.ts';
import { callStatusRank, type Session, type SessionNode, type SessionsRepository } from '../../repositories/sessions.ts';
import type { SessionRow } from '../../rows/sessions.ts';
import { connectedSession, createdSession, INSERT_COLUMNS, insertValues, toSession } from '../../rows/sessions.ts';
import { sessionListSql, sqliteDialect } from '../../rows/session-filter.ts';
import { retallied } from '../traffic-tally.ts';

const INSERT_SQL = `INSERT INTO sessions (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})`;

/** callStatusRank in SQL, of the stored call_status. */
const RANK_SQL = `(CASE call_status WHEN 'queued' THEN 0 WHEN 'ringing' THEN 1 WHEN 'answered' THEN 2 ELSE 3 END)`;

/**
 * An account's outbound calls for its limits (repositories/sessions.ts, countOutbound), each
 * count on a partial index of its own: the live ones (not ended, no final call status, and
 * connected or with a token still waiting) and the ones placed since a time, ended or not.
 */
const OUTBOUND_COUNT_SQL = `SELECT
    (SELECT COUNT(*) FROM sessions WHERE account_id = ? AND direction = 'outbound' AND status != 'ended'
       AND (call_status IS NULL OR call_status IN ('queued', 'ringing', 'answered')) AND (status = 'connected' OR expires_at > ?)) AS live,
    (SELECT COUNT(*) FROM sessions WHERE account_id = ? AND direction = 'outbound' AND created_at > ?) AS last_minute`;

/** All but startReads, which the store puts together from the other repositories' reads (../store.ts). */
export function createSessionsRepository(db: Database, node: SessionNode): Omit<SessionsRepository, 'startReads'> {
  /**
   * Inside the write that just connected a session of the account: throws (so the write rolls
   * back and nothing is journaled) when that took the account past its cap, this one included.
   */
  const refuseOverCap = (tx: WriteTransaction, accountId: string): void => {
    if (node.sessionsPerAccount <= 0) return;
    const live = tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions WHERE account_id = ? AND status = 'connected'`, [accountId])!.n;
    if (live > node.sessionsPerAccount) throw new SessionCapReachedError(node.sessionsPerAccount);
  };

  /** A carrier call id another session of the carrier holds: refused before the unique index would fail the write. */
  const refuseTakenCall = (tx: WriteTransaction, transport: string, callId: string | null, ownId: string): void => {
    if (callId === null) return;
    if (tx.get('SELECT 1 FROM sessions WHERE transport = ? AND carrier_call_id = ? AND id != ?', [transport, callId, ownId])) throw new CarrierCallTakenError();
  };

  const findById = (id: string): Session | null => {
    const row = db.get<SessionRow>('SELECT * FROM sessions WHERE id = ?', [id]);
    return row ? toSession(row) : null;
  };

  const insert = (session: Session, apiKeyId: string | null = null): Promise<Session> =>
    db.write((tx) => {
      refuseTakenCall(tx, session.transport, session.carrierCallId, session.id);
      tx.run(INSERT_SQL, insertValues(session, apiKeyId, session.status === 'connected' ? node.id : null));
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
        // Counted into the flow's traffic as it ends; a retried end changes nothing, counts included.
        retallied(tx, id, () =>
          tx.run(
            `UPDATE sessions SET status = 'ended', ended_at = ?, end_reason = ?, credits_charged_cents = ?,
               duration_secs = CASE WHEN ? IS NOT NULL THEN ?
                                    WHEN started_at IS NULL THEN 0
                                    ELSE MAX(0, CAST(ROUND(? - started_at) AS INTEGER)) END
             WHERE id = ? AND status != 'ended'`,
            [endedAt, reason, creditsChargedCents, durationSecs ?? null, durationSecs ?? null, endedAt, id],
          ),
        );
        return findById(id);
      });
    },

    endInterrupted() {
      return db.write((tx) => {
        const ids = tx.all<{ id: string }>(`SELECT id FROM sessions WHERE status = 'connected'`, []).map((row) => row.id);
        for (const id of ids) {
          retallied(tx, id, () => {
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
          });
        }
        return ids;
      });
    },

    async listRecent(accountId, limit = 50, filter = {}, now = Date.now() / 1000) {
      const params: Array<string | number> = [];
      const sql = sessionListSql(accountId, filter, limit, now, sqliteDialect(params));
      return db.all<SessionRow>(sql, params).map(toSession);
    },

    async setRecordingFile(id, file) {
      await db.write((tx) => tx.run('UPDATE sessions SET recording_file = ? WHERE id = ?', [file, id]));
    },

    async setFlowVersion(id, version, draft) {
      await db.write((tx) => tx.run('UPDATE sessions SET flow_version = ?, flow_draft = ? WHERE id = ?', [version, draft ? 1 : 0, id]));
    },

    async findByCarrierCallId(carrier, callId) {
      const row = db.get<SessionRow>('SELECT * FROM sessions WHERE transport = ? AND carrier_call_id = ?', [carrier, callId]);
      return row ? toSession(row) : null;
    },

    setCallStatus(id, status) {
      return db.write((tx) => {
        const moved = tx.run(`UPDATE sessions SET call_status = ? WHERE id = ? AND (call_status IS NULL OR ${RANK_SQL} < ?)`, [status, id, callStatusRank(status)]) > 0;
        const session = findById(id);
        return session ? { session, moved } : null;
      });
    },

    setCarrierCallId(id, callId) {
      return db.write((tx) => {
        const session = findById(id);
        if (!session) return null;
        refuseTakenCall(tx, session.transport, callId, id);
        tx.run('UPDATE sessions SET carrier_call_id = ? WHERE id = ?', [callId, id]);
        return findById(id);
      });
    },

    setTransferredTo(id, target) {
      return db.write((tx) => {
        tx.run('UPDATE sessions SET transferred_to = ? WHERE id = ?', [target, id]);
        return findById(id);
      });
    },

    setAnsweredBy(id, answeredBy) {
      return db.write((tx) => {
        const changed = tx.run('UPDATE sessions SET answered_by = ? WHERE id = ? AND answered_by IS NULL', [answeredBy, id]);
        return changed > 0 ? findById(id) : null;
      });
    },

    async countOutbound(accountId, now) {
      const row = db.get<{ live: number; last_minute: number }>(OUTBOUND_COUNT_SQL, [accountId, now, accountId, now - 60])!;
      return { live: row.live, lastMinute: row.last_minute };
    },
  };
}

