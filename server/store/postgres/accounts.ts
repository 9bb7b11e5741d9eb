// Accounts on PostgreSQL: the same behaviour as the sql.js repository (../repositories/accounts.ts).
// Two nodes may sign the same email up at once: the unique index on lower(email COLLATE "C")
// lets one insert win, and the loser's unique violation becomes the same EmailTakenError.

import { EmailTakenError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Account, AccountsRepository } from '../repositories/accounts.ts';
import { insertLedgerEntry } from './credits.ts';
import type { PgDatabase } from './database.ts';
import { isUniqueViolation } from './database.ts';
import type { AccountRow } from '../rows/accounts.ts';
import { toAccount } from '../rows/accounts.ts';

/** ASCII letters only, as SQLite's NOCASE folds them (see migrations.ts). */
const SAME_EMAIL = 'lower(email COLLATE "C") = lower($1 COLLATE "C")';

export function createPgAccountsRepository(db: PgDatabase): AccountsRepository {
  return {
    async create({ email, passwordHash, signupCreditCents = 0 }) {
      const account: Account = { id: newId(), email, passwordHash, createdAt: db.now(), signedOutAt: null };
      try {
        return await db.transaction(async (tx) => {
          if (await tx.row(`SELECT 1 FROM accounts WHERE ${SAME_EMAIL}`, [email])) throw new EmailTakenError();
          await tx.run('INSERT INTO accounts (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)', [
            account.id,
            account.email,
            account.passwordHash,
            account.createdAt,
          ]);
          if (signupCreditCents > 0) {
            await insertLedgerEntry(tx, {
              accountId: account.id,
              deltaCents: signupCreditCents,
              reason: 'signup',
              idempotencyKey: `signup:${account.id}`,
              sessionId: null,
              createdAt: account.createdAt,
            });
          }
          return account;
        });
      } catch (error) {
        if (isUniqueViolation(error, 'accounts_email_nocase')) throw new EmailTakenError();
        throw error;
      }
    },

    async findByEmail(email) {
      const row = await db.row<AccountRow>(`SELECT * FROM accounts WHERE ${SAME_EMAIL}`, [email]);
      return row ? toAccount(row) : null;
    },

    async findById(id) {
      const row = await db.row<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
      return row ? toAccount(row) : null;
    },

    async signOut(id, at) {
      await db.run('UPDATE accounts SET signed_out_at = $1 WHERE id = $2', [at, id]);
    },
  };
}

