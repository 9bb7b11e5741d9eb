// An account's named secrets on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/secrets.ts). put() is one upsert that says itself whether it inserted
// (xmax = 0 on a freshly inserted row), so two nodes putting a new name at once report
// "created" once, not twice as a read-then-write would.

import type { SecretsRepository, StoredSecret } from '../repositories/secrets.ts';
import type { PgDatabase } from './database.ts';
import type { SecretRow } from '../rows/secrets.ts';

export function createPgSecretsRepository(db: PgDatabase): SecretsRepository {
  const sealed = async (accountId: string): Promise<StoredSecret[]> =>
    (
      await db.rows<SecretRow>(
        // COLLATE "C": byte order, as SQLite's BINARY orders names (the database's own collation may not).
        'SELECT name, value_enc, created_at, updated_at FROM account_secrets WHERE account_id = $1 ORDER BY name COLLATE "C"',
        [accountId],
      )
    ).map((row) => ({ name: row.name, valueEnc: row.value_enc, createdAt: row.created_at, updatedAt: row.updated_at }));

  return {
    list: async (accountId) => (await sealed(accountId)).map(({ valueEnc: _sealed, ...rest }) => rest),
    sealed,

    async put(accountId, name, valueEnc) {
      const now = db.now();
      const row = await db.row<{ created_at: number; inserted: boolean }>(
        `INSERT INTO account_secrets (account_id, name, value_enc, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
         ON CONFLICT (account_id, name) DO UPDATE SET value_enc = excluded.value_enc, updated_at = excluded.updated_at
         RETURNING created_at, (xmax = 0) AS inserted`,
        [accountId, name, valueEnc, now],
      );
      return { created: row!.inserted, secret: { name, createdAt: row!.created_at, updatedAt: now } };
    },

    async delete(accountId, name) {
      return (await db.run('DELETE FROM account_secrets WHERE account_id = $1 AND name = $2', [accountId, name])) > 0;
    },
  };
}
