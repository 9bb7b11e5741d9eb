// The embedded store's (sql.js) credits repository; its interface and types are in ../../repositories/credits.ts.
import type { Database, WriteTransaction } from '../database.ts';
import { IdempotencyKeyReusedError } from '../../errors.ts';
import type { DebitResult, CreditsRepository } from '../../repositories/credits.ts';
import { checkCents } from '../../rows/credits.ts';

const BALANCE_SQL = 'SELECT COALESCE(SUM(delta_cents), 0) AS balance FROM credit_ledger WHERE account_id = ?';

export function createCreditsRepository(db: Database): CreditsRepository {
  return {
    grant(accountId, cents, reason, idempotencyKey) {
      const invalid = checkCents(cents);
      if (invalid) return Promise.reject(invalid);
      return db.write((tx) => {
        const duplicate = findEarlierEntry(tx, idempotencyKey, accountId, cents);
        if (!duplicate) {
          insertLedgerEntry(tx, { accountId, deltaCents: cents, reason, idempotencyKey, sessionId: null, createdAt: db.now() });
        }
        return { balance: balanceIn(tx, accountId), duplicate };
      });
    },

    debit(accountId, cents, { idempotencyKey, sessionId = null, reason = 'session_minute' }) {
      const invalid = checkCents(cents);
      if (invalid) return Promise.reject(invalid);
      // Check and charge in one transaction: writes run one at a time, so no other debit can
      // spend the same balance between the two.
      return db.write((tx): DebitResult => {
        if (findEarlierEntry(tx, idempotencyKey, accountId, -cents)) {
          return { ok: true, balance: balanceIn(tx, accountId), duplicate: true };
        }
        const balance = balanceIn(tx, accountId);
        if (balance < cents) return { ok: false, balance };
        insertLedgerEntry(tx, { accountId, deltaCents: -cents, reason, idempotencyKey, sessionId, createdAt: db.now() });
        return { ok: true, balance: balance - cents, duplicate: false };
      });
    },

    async balance(accountId) {
      return db.get<{ balance: number }>(BALANCE_SQL, [accountId])?.balance ?? 0;
    },
  };
}

/** Also used by account creation, so the signup grant lands in the same transaction. */

export function insertLedgerEntry(
  tx: WriteTransaction,
  entry: {
    accountId: string;
    deltaCents: number;
    reason: string;
    idempotencyKey: string;
    sessionId: string | null;
    createdAt: number;
  },
): void {
  if (!Number.isSafeInteger(entry.deltaCents)) {
    throw new RangeError(`A ledger entry must be a whole number of cents; got ${entry.deltaCents}`);
  }
  tx.run(
    `INSERT INTO credit_ledger (account_id, delta_cents, reason, idempotency_key, session_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
    [entry.accountId, entry.deltaCents, entry.reason, entry.idempotencyKey, entry.sessionId, entry.createdAt],
  );
}

/** True when the key was already used for this very entry; throws when used for another. */

function findEarlierEntry(tx: WriteTransaction, idempotencyKey: string, accountId: string, deltaCents: number): boolean {
  const earlier = tx.get<{ account_id: string; delta_cents: number }>(
    'SELECT account_id, delta_cents FROM credit_ledger WHERE idempotency_key = ?',
    [idempotencyKey],
  );
  if (!earlier) return false;
  if (earlier.account_id !== accountId || earlier.delta_cents !== deltaCents) {
    throw new IdempotencyKeyReusedError(idempotencyKey);
  }
  return true;
}

function balanceIn(tx: WriteTransaction, accountId: string): number {
  return tx.get<{ balance: number }>(BALANCE_SQL, [accountId])?.balance ?? 0;
}

