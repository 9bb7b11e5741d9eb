// API keys on PostgreSQL: the same behaviour as the sql.js repository (../repositories/api-keys.ts)
// with one difference that several nodes force: active keys are NOT remembered in memory. The
// sql.js store could keep them because its process was the only writer, so a revoke there
// forgot them at once; here a key revoked through node A must stop working on node B at once
// too, and a cache invalidated by NOTIFY would still accept it for the notification's delay.
// A lookup is one indexed query on key_hash.
//
// What this process does remember is whose a key is (its id and account, by hash), once it has
// found it active: those never change, so a request with a key seen before need not wait for the
// key before it reads. checkWithFirstRead hands the request that identity with a check the
// request's first read makes in the same statement (database.ts, checkingKey): one round trip
// where two were, and the key's state is still read from the database on every request.
//
// touch() keeps its in-memory "last recorded use" per key: it only spares writes, and the
// conditional UPDATE decides across nodes, so two nodes touching in the same minute write once.

import { newId } from '../ids.ts';
import type { ApiKey, ApiKeysRepository } from '../repositories/api-keys.ts';
import { TOUCH_INTERVAL_SECS } from '../repositories/api-keys.ts';
import { prepared, type PgDatabase } from './database.ts';
import type { ApiKeyRow } from '../rows/api-keys.ts';
import { toApiKey } from '../rows/api-keys.ts';

/** Identities remembered at most; past it the oldest is forgotten (and looked up again when used). */
const IDENTITIES_KEPT = 10_000;
const FIND_ACTIVE = prepared('SELECT * FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL');

export function createPgApiKeysRepository(db: PgDatabase): ApiKeysRepository {
  /** When each key was last recorded as used, so most touch() calls need no query at all. */
  const lastRecordedUse = new Map<string, number>();
  /** Whose each key seen active is, by hash: never whether it still is. */
  const identities = new Map<string, { id: string; accountId: string }>();
  return {
    async create({ accountId, label, prefix, keyHash }) {
      const key: ApiKey = {
        id: newId(),
        accountId,
        label,
        prefix,
        keyHash,
        createdAt: db.now(),
        lastUsedAt: null,
        revokedAt: null,
      };
      await db.run('INSERT INTO api_keys (id, account_id, label, prefix, key_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        key.id,
        key.accountId,
        key.label,
        key.prefix,
        key.keyHash,
        key.createdAt,
      ]);
      return key;
    },

    async listByAccount(accountId) {
      const rows = await db.rows<ApiKeyRow>(
        // rowid (an identity column here, see migrations.ts) breaks ties within one clock tick.
        'SELECT * FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, rowid DESC',
        [accountId],
      );
      return rows.map(toApiKey);
    },

    async findActiveByHash(keyHash) {
      const row = await db.row<ApiKeyRow>(FIND_ACTIVE, [keyHash]);
      if (!row) return null;
      const key = toApiKey(row);
      if (!identities.has(keyHash)) {
        if (identities.size >= IDENTITIES_KEPT) identities.delete(identities.keys().next().value!);
        identities.set(keyHash, { id: key.id, accountId: key.accountId });
      }
      return key;
    },

    checkWithFirstRead(keyHash) {
      const key = identities.get(keyHash);
      return key ? { key, check: db.checkingKey(keyHash) } : null;
    },

    async revoke(accountId, id) {
      const revokedAt = db.now();
      return db.transaction(async (tx) => {
        const revoked =
          (await tx.run('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND account_id = $3 AND revoked_at IS NULL', [revokedAt, id, accountId])) === 1;
        // The session tokens this key asked for die with it, in the same transaction: a leaked
        // key's revocation must not leave ten minutes of tokens that still open sessions.
        if (revoked) {
          await tx.run(`UPDATE sessions SET expires_at = $1 WHERE api_key_id = $2 AND status = 'created' AND expires_at > $1`, [revokedAt, id]);
        }
        return revoked;
      });
    },

    async touch(id, now) {
      const remembered = lastRecordedUse.get(id);
      if (remembered !== undefined && now - remembered < TOUCH_INTERVAL_SECS) return false;
      const row = await db.row<{ last_used_at: number | null }>('SELECT last_used_at FROM api_keys WHERE id = $1', [id]);
      // Decided on the read so that the common case costs no write at all.
      if (!row || (row.last_used_at !== null && now - row.last_used_at < TOUCH_INTERVAL_SECS)) {
        if (row?.last_used_at != null) lastRecordedUse.set(id, row.last_used_at);
        return false;
      }
      lastRecordedUse.set(id, now);
      return (
        (await db.run('UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)', [
          now,
          id,
          now - TOUCH_INTERVAL_SECS,
        ])) === 1
      );
    },
  };
}

