// The embedded store's (sql.js) secrets repository; its interface and types are in ../../repositories/secrets.ts.
import type { Database } from '../database.ts';
import type { StoredSecret, SecretsRepository } from '../../repositories/secrets.ts';
import type { SecretRow } from '../../rows/secrets.ts';

export function createSecretsRepository(db: Database): SecretsRepository {
  const sealed = (accountId: string): StoredSecret[] =>
    db
      .all<SecretRow>('SELECT name, value_enc, created_at, updated_at FROM account_secrets WHERE account_id = ? ORDER BY name', [accountId])
      .map((row) => ({ name: row.name, valueEnc: row.value_enc, createdAt: row.created_at, updatedAt: row.updated_at }));

  return {
    list: async (accountId) => sealed(accountId).map(({ valueEnc: _sealed, ...rest }) => rest),
    sealed: async (accountId) => sealed(accountId),

    put(accountId, name, valueEnc) {
      const now = db.now();
      return db.write((tx) => {
        const before = tx.get<{ created_at: number }>('SELECT created_at FROM account_secrets WHERE account_id = ? AND name = ?', [accountId, name]);
        tx.run(
          `INSERT INTO account_secrets (account_id, name, value_enc, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (account_id, name) DO UPDATE SET value_enc = excluded.value_enc, updated_at = excluded.updated_at`,
          [accountId, name, valueEnc, now, now],
        );
        return { created: !before, secret: { name, createdAt: before?.created_at ?? now, updatedAt: now } };
      });
    },

    delete(accountId, name) {
      return db.write((tx) => {
        const existed = tx.get<{ name: string }>('SELECT name FROM account_secrets WHERE account_id = ? AND name = ?', [accountId, name]);
        if (existed) tx.run('DELETE FROM account_secrets WHERE account_id = ? AND name = ?', [accountId, name]);
        return existed !== undefined;
      });
    },
  };
}
