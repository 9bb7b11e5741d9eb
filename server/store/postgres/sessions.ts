// Voice sessions on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/sessions.ts). A token is claimed by one conditional UPDATE … RETURNING, so
// when two nodes are handed the same token at once exactly one of them gets the session: the
// row lock makes the second UPDATE wait, re-check status = 'created', and match nothing.
//
// The per-account cap holds across nodes: a connect (claim, createConnected) locks the account's
// row (FOR NO KEY UPDATE), counts the account's connected sessions on live nodes, and connects in the
// same transaction. Every connect of one account queues on that lock, and under READ COMMITTED
// each statement after it sees what the ones before it committed, so the count is never stale.
// Sessions of a gone node do not count: they are about to be ended (endInterrupted).

import { CarrierCallTakenError, SessionCapReachedError } from '../errors.ts';
import { NODE_GONE_AFTER_SECS } from '../repositories/nodes.ts';
import { callStatusRank, type Session, type SessionNode, type SessionsRepository } from '../repositories/sessions.ts';
import { isUniqueViolation, prepared, type PgDatabase, type PgQueryable } from './database.ts';
import type { SessionRow } from '../rows/sessions.ts';
import { connectedSession, createdSession, INSERT_COLUMNS, insertValues, toSession } from '../rows/sessions.ts';
import { postgresDialect, sessionListSql } from '../rows/session-filter.ts';
import { retallied, tallyEnded } from './traffic-tally.ts';
import { COLUMNS as PROVIDER_SETTING_COLUMNS, emptySettings, toProviderSettings, type ProviderSettingsRow } from '../rows/providers.ts';
import { EXPERIMENT_COLUMNS, toExperiment, type ExperimentRow } from '../rows/experiments.ts';

/** Every POST /v1/sessions sends it: prepared once per connection. */
const INSERT_SQL = prepared(`INSERT INTO sessions (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`);

const PROVIDER_COLUMNS = ['account_id', ...Object.values(PROVIDER_SETTING_COLUMNS), 'updated_at'] as const;
const RUNNING_COLUMNS = EXPERIMENT_COLUMNS.split(', ');

/**
 * What every POST /v1/sessions reads (startReads), in one prepared statement: the flow's
 * existence, the balance, the provider settings and the running experiment, each as its own
 * repository reads it (the same columns, so the same types), the settings' and the experiment's
 * columns prefixed `p_` and `e_` (absent rows: nulls). $1 the account, $2 the flow or null.
 */
const START_READS = prepared(`SELECT
    EXISTS (SELECT 1 FROM flows WHERE id = $2 AND account_id = $1) AS flow_found,
    (SELECT COALESCE(SUM(delta_cents), 0) FROM credit_ledger WHERE account_id = $1) AS balance,
    ${PROVIDER_COLUMNS.map((column) => `p.${column} AS p_${column}`).join(', ')},
    ${RUNNING_COLUMNS.map((column) => `e.${column} AS e_${column}`).join(', ')}
  FROM (SELECT 1) AS one
  LEFT JOIN provider_settings p ON p.account_id = $1
  LEFT JOIN LATERAL (SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE account_id = $1 AND flow_id = $2 AND stopped_at IS NULL LIMIT 1) e ON true`);

/** The columns of START_READS's row that start with `prefix`, without it. */
function prefixed<Row>(row: Record<string, unknown>, prefix: string, columns: readonly string[]): Row {
  return Object.fromEntries(columns.map((column) => [column, row[prefix + column]])) as Row;
}

/** callStatusRank in SQL, of the stored call_status. */
const RANK_SQL = `(CASE call_status WHEN 'queued' THEN 0 WHEN 'ringing' THEN 1 WHEN 'answered' THEN 2 ELSE 3 END)`;

/** The carrier-call unique index: two nodes taking the same retried webhook at once, the second insert loses here. */
const carrierCallTaken = (error: unknown): never => {
  throw isUniqueViolation(error, 'sessions_by_carrier_call') ? new CarrierCallTakenError() : error;
};

/** `sessions s` belongs to a node that is alive at $n (its row was refreshed within NODE_GONE_AFTER_SECS). */
const onLiveNode = (now: string, goneAfterSecs: number) =>
  `EXISTS (SELECT 1 FROM nodes n WHERE n.id = s.node_id AND n.last_seen_at > ${now}::double precision - ${Number(goneAfterSecs)})`;

export function createPgSessionsRepository(db: PgDatabase, node: SessionNode): SessionsRepository {
  const ON_LIVE_NODE = (now: string) => onLiveNode(now, node.goneAfterSecs ?? NODE_GONE_AFTER_SECS);
  /**
   * Inside a transaction: every connect of the account waits here for the ones before it. NO KEY
   * UPDATE, as the ledger's debits take it (credits.ts): it queues connects and debits of the
   * account, but not the inserts of rows that reference the account (their foreign-key check
   * takes KEY SHARE, which FOR UPDATE would hold up).
   */
  const lockAccount = (tx: PgQueryable, accountId: string) => tx.run('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
  /**
   * Inside the transaction that just connected a session of the account, under its lock:
   * throws (so the transaction rolls back) when that took the account past its cap, counting
   * the connected sessions on live nodes, this one included.
   */
  const refuseOverCap = async (tx: PgQueryable, accountId: string, now: number): Promise<void> => {
    const live = await tx.row<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions s WHERE s.account_id = $1 AND s.status = 'connected' AND ${ON_LIVE_NODE('$2')}`, [
      accountId,
      now,
    ]);
    if ((live?.n ?? 0) > node.sessionsPerAccount) throw new SessionCapReachedError(node.sessionsPerAccount);
  };

  const findById = async (id: string): Promise<Session | null> => {
    const row = await db.row<SessionRow>('SELECT * FROM sessions WHERE id = $1', [id]);
    return row ? toSession(row) : null;
  };

  const insert = async (session: Session, apiKeyId: string | null = null): Promise<Session> => {
    const params = insertValues(session, apiKeyId, session.status === 'connected' ? node.id : null);
    if (session.status === 'connected' && node.sessionsPerAccount > 0) {
      await db.transaction(async (tx) => {
        await lockAccount(tx, session.accountId);
        await tx.run(INSERT_SQL, params);
        await refuseOverCap(tx, session.accountId, session.createdAt);
      }).catch(carrierCallTaken);
    } else {
      await db.run(INSERT_SQL, params).catch(carrierCallTaken);
    }
    return session;
  };

  return {
    async startReads(accountId, flowId) {
      const row = (await db.row<Record<string, unknown> & { flow_found: boolean; balance: number }>(START_READS, [accountId, flowId]))!;
      return {
        flowFound: flowId === null || row.flow_found,
        balance: row.balance,
        providers: row.p_account_id === null ? emptySettings(accountId) : toProviderSettings(prefixed<ProviderSettingsRow>(row, 'p_', PROVIDER_COLUMNS)),
        experiment: flowId === null || row.e_id === null ? null : toExperiment(prefixed<ExperimentRow>(row, 'e_', RUNNING_COLUMNS)),
      };
    },

    create(input) {
      return insert(createdSession(input, db.now()), input.apiKeyId ?? null);
    },

    createConnected(input) {
      return insert(connectedSession(input, db.now()));
    },

    findById,

    async findByTokenHash(tokenHash) {
      const row = await db.row<SessionRow>('SELECT * FROM sessions WHERE token_hash = $1', [tokenHash]);
      return row ? toSession(row) : null;
    },

    async claim(tokenHash, now) {
      const connect = (q: PgQueryable) =>
        q.row<SessionRow>(
          `UPDATE sessions SET status = 'connected', started_at = $1, node_id = $3
           WHERE token_hash = $2 AND status = 'created' AND expires_at > $1
           RETURNING *`,
          [now, tokenHash, node.id],
        );
      if (node.sessionsPerAccount <= 0) {
        const row = await connect(db);
        return row ? toSession(row) : null;
      }
      const row = await db.transaction(async (tx) => {
        const waiting = await tx.row<{ account_id: string }>(`SELECT account_id FROM sessions WHERE token_hash = $1 AND status = 'created' AND expires_at > $2`, [
          tokenHash,
          now,
        ]);
        if (!waiting) return null;
        await lockAccount(tx, waiting.account_id);
        // Another node may have claimed it while this one waited for the lock: then the UPDATE
        // matches nothing, and the token reads as used, not as the account being full.
        const claimed = await connect(tx);
        if (claimed) await refuseOverCap(tx, waiting.account_id, now);
        return claimed;
      });
      return row ? toSession(row) : null;
    },

    async end(id, { endedAt, reason, creditsChargedCents, durationSecs }) {
      if (!Number.isSafeInteger(creditsChargedCents) || creditsChargedCents < 0) {
        throw new RangeError(`creditsChargedCents must be whole cents; got ${creditsChargedCents}`);
      }
      if (durationSecs !== undefined && (!Number.isSafeInteger(durationSecs) || durationSecs < 0)) {
        throw new RangeError(`durationSecs must be whole seconds; got ${durationSecs}`);
      }
      // A duration the session measured is stored as it is; otherwise it is counted from
      // started_at, rounded half away from zero in double arithmetic as SQLite's ROUND does
      // (trunc(x + 0.5), x ≥ 0 after GREATEST). A session that never connected ran for no time.
      // Counted into the flow's traffic as it ends, in the same transaction; a retried end (or the
      // same end on two nodes) changes nothing, counts included.
      await db.transaction((tx) =>
        retallied(tx, id, () =>
          tx.run(
            `UPDATE sessions SET status = 'ended', ended_at = $1, end_reason = $2, credits_charged_cents = $3,
               duration_secs = CASE WHEN $4::bigint IS NOT NULL THEN $4::bigint
                                    WHEN started_at IS NULL THEN 0
                                    ELSE GREATEST(0, trunc($1::double precision - started_at + 0.5))::bigint END
             WHERE id = $5 AND status <> 'ended'`,
            [endedAt, reason, creditsChargedCents, durationSecs ?? null, id],
          ),
        ),
      );
      return findById(id);
    },

    // With several nodes on one database a 'connected' session may be live on another node: only
    // those of gone nodes end (no heartbeat within NODE_GONE_AFTER_SECS, no row: stopped or
    // crashed; or no node at all, a row from before nodes were recorded). Every node runs this,
    // at start and periodically, perhaps at the same moment: the UPDATE re-checks status after
    // waiting for another's row lock, so each session is ended, and returned, by one of them.
    // Its end and charge are worked out as on sql.js (../repositories/sessions.ts).
    async endInterrupted() {
      // The sessions it ends are counted into their flows' traffic in the same transaction.
      const rows = await db.transaction(async (tx) => {
        const ended = await tx.rows<{ id: string }>(
          `WITH gone AS (
             SELECT s.id,
                    GREATEST(COALESCE(s.started_at, s.created_at),
                             COALESCE((SELECT MAX(e.at) FROM session_events e WHERE e.session_id = s.id), 0)) AS ended_at,
                    COALESCE((SELECT -SUM(l.delta_cents) FROM credit_ledger l WHERE l.session_id = s.id AND l.delta_cents < 0), 0) AS charged
             FROM sessions s
             WHERE s.status = 'connected' AND NOT ${ON_LIVE_NODE('$1')}
           )
           UPDATE sessions SET status = 'ended', end_reason = 'server_restarted', ended_at = gone.ended_at,
             credits_charged_cents = gone.charged,
             duration_secs = GREATEST(0, trunc(gone.ended_at - COALESCE(sessions.started_at, gone.ended_at) + 0.5))::bigint
           FROM gone
           WHERE sessions.id = gone.id AND sessions.status = 'connected'
           RETURNING sessions.id`,
          [db.now()],
        );
        await tallyEnded(tx, ended.map((row) => row.id));
        return ended;
      });
      return rows.map((row) => row.id);
    },

    async listRecent(accountId, limit = 50, filter = {}, now = Date.now() / 1000) {
      const params: unknown[] = [];
      const sql = sessionListSql(accountId, filter, limit, now, postgresDialect(params));
      return (await db.rows<SessionRow>(sql, params)).map(toSession);
    },

    async setRecordingFile(id, file) {
      await db.run('UPDATE sessions SET recording_file = $1 WHERE id = $2', [file, id]);
    },

    async setFlowVersion(id, version, draft) {
      await db.run('UPDATE sessions SET flow_version = $1, flow_draft = $2 WHERE id = $3', [version, draft ? 1 : 0, id]);
    },

    async findByCarrierCallId(carrier, callId) {
      const row = await db.row<SessionRow>('SELECT * FROM sessions WHERE transport = $1 AND carrier_call_id = $2', [carrier, callId]);
      return row ? toSession(row) : null;
    },

    // One conditional UPDATE: two nodes handed two statuses of one call at once leave the higher.
    async setCallStatus(id, status) {
      const moved = (await db.run(`UPDATE sessions SET call_status = $1 WHERE id = $2 AND (call_status IS NULL OR ${RANK_SQL} < $3::int)`, [status, id, callStatusRank(status)])) > 0;
      const session = await findById(id);
      return session ? { session, moved } : null;
    },

    async setCarrierCallId(id, callId) {
      const row = await db.row<SessionRow>('UPDATE sessions SET carrier_call_id = $1 WHERE id = $2 RETURNING *', [callId, id]).catch(carrierCallTaken);
      return row ? toSession(row) : null;
    },

    async setTransferredTo(id, target) {
      const row = await db.row<SessionRow>('UPDATE sessions SET transferred_to = $1 WHERE id = $2 RETURNING *', [target, id]);
      return row ? toSession(row) : null;
    },

    async setAnsweredBy(id, answeredBy) {
      const row = await db.row<SessionRow>('UPDATE sessions SET answered_by = $1 WHERE id = $2 AND answered_by IS NULL RETURNING *', [answeredBy, id]);
      return row ? toSession(row) : null;
    },

    async countOutbound(accountId, now) {
      const row = await db.row<{ live: number; last_minute: number }>(
        `SELECT
           (SELECT COUNT(*) FROM sessions WHERE account_id = $1 AND direction = 'outbound' AND status != 'ended'
              AND (call_status IS NULL OR call_status IN ('queued', 'ringing', 'answered')) AND (status = 'connected' OR expires_at > $2)) AS live,
           (SELECT COUNT(*) FROM sessions WHERE account_id = $1 AND direction = 'outbound' AND created_at > $3) AS last_minute`,
        [accountId, now, now - 60],
      );
      return { live: Number(row!.live), lastMinute: Number(row!.last_minute) };
    },
  };
}

