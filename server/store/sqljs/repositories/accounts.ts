// The embedded store's (sql.js) accounts repository; its interface and types are in ../../repositories/accounts.ts.
import type { Database } from '../database.ts';
import { EmailTakenError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { insertLedgerEntry } from './credits.ts';
import type { Account, AccountsRepository } from '../../repositories/accounts.ts';
import type { AccountRow } from '../../rows/accounts.ts';
import { toAccount } from '../../rows/accounts.ts';

export function createAccountsRepository(db: Database): AccountsRepository {
  return {
    create({ email, passwordHash, signupCreditCents = 0 }) {
      const account: Account = { id: newId(), email, passwordHash, createdAt: db.now(), signedOutAt: null };
      return db.write((tx) => {
        // The column is COLLATE NOCASE, so this equality ignores (ASCII) letter case.
        if (tx.get('SELECT 1 FROM accounts WHERE email = ?', [email])) throw new EmailTakenError();
        tx.run('INSERT INTO accounts (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)', [
          account.id,
          account.email,
          account.passwordHash,
          account.createdAt,
        ]);
        if (signupCreditCents > 0) {
          insertLedgerEntry(tx, {
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
    },

    async findByEmail(email) {
      const row = db.get<AccountRow>('SELECT * FROM accounts WHERE email = ?', [email]);
      return row ? toAccount(row) : null;
    },

    async findById(id) {
      const row = db.get<AccountRow>('SELECT * FROM accounts WHERE id = ?', [id]);
      return row ? toAccount(row) : null;
    },

    async signOut(id, at) {
      await db.write((tx) => tx.run('UPDATE accounts SET signed_out_at = ? WHERE id = ?', [at, id]));
    },
  };
}

