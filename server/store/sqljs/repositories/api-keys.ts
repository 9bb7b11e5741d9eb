// The embedded store's (sql.js) api-keys repository; its interface and types are in ../../repositories/api-keys.ts.
import type { Database } from '../database.ts';
import { newId } from '../../ids.ts';
import type { ApiKey, ApiKeysRepository } from '../../repositories/api-keys.ts';
import { TOUCH_INTERVAL_SECS } from '../../repositories/api-keys.ts';
import type { ApiKeyRow } from '../../rows/api-keys.ts';
import { toApiKey } from '../../rows/api-keys.ts';

export function createApiKeysRepository(db: Database): ApiKeysRepository {
  // Every API-key request looks its key up; this process is the data dir's only writer (the
  // lockfile), so active keys can be remembered exactly: revoke() forgets them at once.
  const activeByHash = new Map<string, ApiKey>();
  /** When each key was last recorded as used, so most touch() calls need no query at all. */
  const lastRecordedUse = new Map<string, number>();
  return {
    create({ accountId, label, prefix, keyHash }) {
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
      return db.write((tx) => {
        tx.run('INSERT INTO api_keys (id, account_id, label, prefix, key_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
          key.id,
          key.accountId,
          key.label,
          key.prefix,
          key.keyHash,
          key.createdAt,
        ]);
        return key;
      });
    },

    async listByAccount(accountId) {
      return db
        .all<ApiKeyRow>(
          // rowid breaks ties between keys created within the same clock tick.
          'SELECT * FROM api_keys WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, rowid DESC',
          [accountId],
        )
        .map(toApiKey);
    },

    async findActiveByHash(keyHash) {
      const known = activeByHash.get(keyHash);
      if (known) return known;
      const row = db.get<ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL', [keyHash]);
      if (!row) return null;
      const key = toApiKey(row);
      activeByHash.set(keyHash, key);
      return key;
    },

    revoke(accountId, id) {
      const revokedAt = db.now();
      // Forgotten before the write is even durable: a revoked key must stop working at once.
      for (const [hash, key] of activeByHash) if (key.id === id && key.accountId === accountId) activeByHash.delete(hash);
      return db.write((tx) => {
        const revoked =
          tx.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND account_id = ? AND revoked_at IS NULL', [revokedAt, id, accountId]) === 1;
        // The session tokens this key asked for die with it, in the same transaction: a leaked
        // key's revocation must not leave ten minutes of tokens that still open sessions.
        if (revoked) {
          tx.run(`UPDATE sessions SET expires_at = ? WHERE api_key_id = ? AND status = 'created' AND expires_at > ?`, [revokedAt, id, revokedAt]);
        }
        return revoked;
      });
    },

    touch(id, now) {
      const remembered = lastRecordedUse.get(id);
      if (remembered !== undefined && now - remembered < TOUCH_INTERVAL_SECS) return Promise.resolve(false);
      const row = db.get<{ last_used_at: number | null }>('SELECT last_used_at FROM api_keys WHERE id = ?', [id]);
      // Decided on the read so that the common case costs no write and no fsync at all.
      if (!row || (row.last_used_at !== null && now - row.last_used_at < TOUCH_INTERVAL_SECS)) {
        if (row?.last_used_at != null) lastRecordedUse.set(id, row.last_used_at);
        return Promise.resolve(false);
      }
      lastRecordedUse.set(id, now);
      for (const [hash, key] of activeByHash) if (key.id === id) activeByHash.set(hash, { ...key, lastUsedAt: now });
      return db.write(
        (tx) =>
          tx.run('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)', [
            now,
            id,
            now - TOUCH_INTERVAL_SECS,
          ]) === 1,
      );
    },
  };
}

