// An account's named secrets (DESIGN §12): what an http tool's headers name as `{secret.NAME}`.
// Values arrive here sealed (SecretBox, in the API layer) and leave sealed: the store never sees
// a secret in clear, and nothing here can return one to a client.

import type { Database } from '../database.ts';

/** What a secret is sealed for (SecretBox context): this account and name only, so a copied row does not open. */
export function secretContext(accountId: string, name: string): string {
  return `secret:${accountId}:${name}`;
}

export interface StoredSecret {
  name: string;
  /** Sealed with the server's secret key, bound to the account and the name. */
  valueEnc: string;
  createdAt: number;
  updatedAt: number;
}

export interface SecretsRepository {
  /** Names and dates, by name; no values. */
  list(accountId: string): Promise<Array<Omit<StoredSecret, 'valueEnc'>>>;
  /** Every secret of the account, sealed: for the engine, which opens only what a call names. */
  sealed(accountId: string): Promise<StoredSecret[]>;
  /** Sets or replaces; returns whether the name was new. */
  put(accountId: string, name: string, valueEnc: string): Promise<{ created: boolean; secret: Omit<StoredSecret, 'valueEnc'> }>;
  /** False when the account had no secret of that name. */
  delete(accountId: string, name: string): Promise<boolean>;
}

interface SecretRow {
  name: string;
  value_enc: string;
  created_at: number;
  updated_at: number;
}

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
