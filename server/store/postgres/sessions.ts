// Voice sessions on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/sessions.ts). A token is claimed by one conditional UPDATE … RETURNING, so
// when two nodes are handed the same token at once exactly one of them gets the session: the
// row lock makes the second UPDATE wait, re-check status = 'created', and match nothing.

import { newId } from '../ids.ts';
import type { JsonObject, NewConnectedSession, Session, SessionMode, SessionStatus, SessionTransport, SessionsRepository } from '../repositories/sessions.ts';
import type { PgDatabase } from './database.ts';

interface SessionRow {
  id: string;
  account_id: string;
  flow_id: string | null;
  token_hash: string | null;
  token_prefix: string | null;
  transport: string;
  mode: string;
  context_json: string;
  metadata_json: string;
  status: string;
  created_at: number;
  expires_at: number;
  started_at: number | null;
  ended_at: number | null;
  duration_secs: number | null;
  end_reason: string | null;
  credits_charged_cents: number;
  record: number;
  recording_file: string | null;
  timeline_events: number;
  timeline_bytes: number;
  timeline_dropped: number;
  flow_version: number | null;
  flow_draft: number;
}

const INSERT_SQL = `INSERT INTO sessions
  (id, account_id, flow_id, token_hash, token_prefix, transport, mode, context_json, metadata_json,
   status, created_at, expires_at, started_at, api_key_id, record, flow_version, flow_draft)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`;

export function createPgSessionsRepository(db: PgDatabase): SessionsRepository {
  const findById = async (id: string): Promise<Session | null> => {
    const row = await db.row<SessionRow>('SELECT * FROM sessions WHERE id = $1', [id]);
    return row ? toSession(row) : null;
  };

  const insert = async (session: Session, apiKeyId: string | null = null): Promise<Session> => {
    await db.run(INSERT_SQL, [
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
    ]);
    return session;
  };

  return {
    create(input) {
      return insert({ ...unstartedSession(input, db.now()), status: 'created', expiresAt: input.expiresAt, record: input.record ?? false }, input.apiKeyId ?? null);
    },

    createConnected(input) {
      const now = db.now();
      // Nothing to claim, so it "expires" the moment it starts.
      return insert({
        ...unstartedSession(input, now),
        status: 'connected',
        expiresAt: now,
        startedAt: now,
        record: input.record ?? false,
        flowVersion: input.flowVersion ?? null,
        flowDraft: input.flowDraft ?? false,
      });
    },

    findById,

    async findByTokenHash(tokenHash) {
      const row = await db.row<SessionRow>('SELECT * FROM sessions WHERE token_hash = $1', [tokenHash]);
      return row ? toSession(row) : null;
    },

    async claim(tokenHash, now) {
      const row = await db.row<SessionRow>(
        `UPDATE sessions SET status = 'connected', started_at = $1
         WHERE token_hash = $2 AND status = 'created' AND expires_at > $1
         RETURNING *`,
        [now, tokenHash],
      );
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
      await db.run(
        `UPDATE sessions SET status = 'ended', ended_at = $1, end_reason = $2, credits_charged_cents = $3,
           duration_secs = CASE WHEN $4::bigint IS NOT NULL THEN $4::bigint
                                WHEN started_at IS NULL THEN 0
                                ELSE GREATEST(0, trunc($1::double precision - started_at + 0.5))::bigint END
         WHERE id = $5 AND status <> 'ended'`,
        [endedAt, reason, creditsChargedCents, durationSecs ?? null, id],
      );
      return findById(id);
    },

    // With several nodes on one database, a 'connected' session may be live on another node,
    // and nothing in the schema says which node holds it: ending them all at one node's start
    // would cut other nodes' calls. So on PostgreSQL this ends none (DESIGN §15; see the
    // interface), until sessions record the node that accepted them.
    async endInterrupted() {
      return [];
    },

    async listRecent(accountId, limit = 50) {
      const rows = await db.rows<SessionRow>('SELECT * FROM sessions WHERE account_id = $1 ORDER BY created_at DESC, rowid DESC LIMIT $2', [
        accountId,
        limit,
      ]);
      return rows.map(toSession);
    },

    async setRecordingFile(id, file) {
      await db.run('UPDATE sessions SET recording_file = $1 WHERE id = $2', [file, id]);
    },

    async setFlowVersion(id, version, draft) {
      await db.run('UPDATE sessions SET flow_version = $1, flow_draft = $2 WHERE id = $3', [version, draft ? 1 : 0, id]);
    },
  };
}

function unstartedSession(
  input: NewConnectedSession & { tokenHash?: string; tokenPrefix?: string },
  now: number,
): Omit<Session, 'status' | 'expiresAt'> {
  return {
    id: newId(),
    accountId: input.accountId,
    flowId: input.flowId,
    tokenHash: input.tokenHash ?? null,
    tokenPrefix: input.tokenPrefix ?? null,
    transport: input.transport,
    mode: input.mode,
    context: input.context,
    metadata: input.metadata,
    createdAt: now,
    startedAt: null,
    endedAt: null,
    durationSecs: null,
    endReason: null,
    creditsChargedCents: 0,
    record: false,
    recordingFile: null,
    timeline: { events: 0, bytes: 0, dropped: 0 },
    flowVersion: null,
    flowDraft: false,
  };
}

function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    accountId: row.account_id,
    flowId: row.flow_id,
    tokenHash: row.token_hash,
    tokenPrefix: row.token_prefix,
    transport: row.transport as SessionTransport,
    mode: row.mode as SessionMode,
    context: JSON.parse(row.context_json) as JsonObject,
    metadata: JSON.parse(row.metadata_json) as JsonObject,
    status: row.status as SessionStatus,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    durationSecs: row.duration_secs,
    endReason: row.end_reason,
    creditsChargedCents: row.credits_charged_cents,
    record: row.record === 1,
    recordingFile: row.recording_file,
    timeline: { events: row.timeline_events, bytes: row.timeline_bytes, dropped: row.timeline_dropped },
    flowVersion: row.flow_version,
    flowDraft: row.flow_draft === 1,
  };
}
