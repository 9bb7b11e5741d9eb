// The credit ledger on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/credits.ts), made safe for several nodes. sql.js could check a balance and
// charge it in one transaction because writes ran one at a time; here every grant and debit
// first locks the account's row (SELECT … FOR UPDATE), so the ledger entries of one account are
// written one at a time across all nodes and none can spend a balance another just spent.
// READ COMMITTED is enough under that lock: each statement after it sees every entry committed
// before the lock was granted.
//
// Idempotency keys are unique across the ledger. Two different accounts racing with one key are
// not serialized by the account locks: the loser's insert hits the unique index (23505), and the
// whole operation is run again, now finding the winner's entry (a duplicate, or
// IdempotencyKeyReusedError when it was another account's or amount), exactly as sql.js answers.

import { IdempotencyKeyReusedError } from '../errors.ts';
import type { CreditsRepository, DebitResult, GrantResult } from '../repositories/credits.ts';
import { isUniqueViolation, prepared, type PgDatabase, type PgQueryable } from './database.ts';
import { checkCents } from '../rows/credits.ts';

const BALANCE_SQL = 'SELECT COALESCE(SUM(delta_cents), 0) AS balance FROM credit_ledger WHERE account_id = $1';
/** Read by every POST /v1/sessions: prepared once per connection. */
const BALANCE = prepared(BALANCE_SQL);

export function createPgCreditsRepository(db: PgDatabase): CreditsRepository {
  return {
    async grant(accountId, cents, reason, idempotencyKey) {
      const invalid = checkCents(cents);
      if (invalid) throw invalid;
      return retryOnKeyRace(() =>
        db.transaction(async (tx): Promise<GrantResult> => {
          await lockAccount(tx, accountId);
          const { balance, duplicate } = await ledgerState(tx, accountId, idempotencyKey, cents);
          if (duplicate) return { balance, duplicate };
          await insertLedgerEntry(tx, { accountId, deltaCents: cents, reason, idempotencyKey, sessionId: null, createdAt: db.now() });
          return { balance: balance + cents, duplicate };
        }),
      );
    },

    async debit(accountId, cents, { idempotencyKey, sessionId = null, reason = 'session_minute' }) {
      const invalid = checkCents(cents);
      if (invalid) throw invalid;
      return retryOnKeyRace(() =>
        db.transaction(async (tx): Promise<DebitResult> => {
          await lockAccount(tx, accountId);
          const { balance, duplicate } = await ledgerState(tx, accountId, idempotencyKey, -cents);
          if (duplicate) return { ok: true, balance, duplicate: true };
          if (balance < cents) return { ok: false, balance };
          await insertLedgerEntry(tx, { accountId, deltaCents: -cents, reason, idempotencyKey, sessionId, createdAt: db.now() });
          return { ok: true, balance: balance - cents, duplicate: false };
        }),
      );
    },

    async balance(accountId) {
      return (await db.row<{ balance: number }>(BALANCE, [accountId]))?.balance ?? 0;
    },
  };
}

/** Also used by account creation, so the signup grant lands in the same transaction. */
export async function insertLedgerEntry(
  tx: PgQueryable,
  entry: {
    accountId: string;
    deltaCents: number;
    reason: string;
    idempotencyKey: string;
    sessionId: string | null;
    createdAt: number;
  },
): Promise<void> {
  if (!Number.isSafeInteger(entry.deltaCents)) {
    throw new RangeError(`A ledger entry must be a whole number of cents; got ${entry.deltaCents}`);
  }
  await tx.run(
    `INSERT INTO credit_ledger (account_id, delta_cents, reason, idempotency_key, session_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [entry.accountId, entry.deltaCents, entry.reason, entry.idempotencyKey, entry.sessionId, entry.createdAt],
  );
}

/**
 * Serializes the account's ledger writes across nodes. An unknown account locks nothing; its
 * insert then fails on the foreign key, as it does in sql.js.
 */
async function lockAccount(tx: PgQueryable, accountId: string): Promise<void> {
  // NO KEY UPDATE: debits of one account still take turns, but inserts that only reference the
  // account (its flows, sessions, keys) are not held up meanwhile, as FOR UPDATE would.
  await tx.row('SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
}

/** A racing insert of the same key lost: run again, and the earlier entry now answers. */
async function retryOnKeyRace<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!isUniqueViolation(error, 'credit_ledger_idempotency_key_key')) throw error;
    return operation();
  }
}

/**
 * The account's balance and whether the key was already used for this very entry (throwing when
 * it was used for another), read in one statement: it runs after the account's lock is granted,
 * so under READ COMMITTED its snapshot holds every entry committed before, and one round trip
 * less under the lock is one less that the account's other debits wait for.
 */
async function ledgerState(
  tx: PgQueryable,
  accountId: string,
  idempotencyKey: string,
  deltaCents: number,
): Promise<{ balance: number; duplicate: boolean }> {
  const state = await tx.row<{ balance: number; earlier_account: string | null; earlier_delta: number | null }>(
    `SELECT (SELECT COALESCE(SUM(delta_cents), 0) FROM credit_ledger WHERE account_id = $1) AS balance,
            earlier.account_id AS earlier_account, earlier.delta_cents AS earlier_delta
     FROM (SELECT 1) AS one LEFT JOIN credit_ledger AS earlier ON earlier.idempotency_key = $2`,
    [accountId, idempotencyKey],
  );
  if (state!.earlier_account === null) return { balance: state!.balance, duplicate: false };
  if (state!.earlier_account !== accountId || state!.earlier_delta !== deltaCents) {
    throw new IdempotencyKeyReusedError(idempotencyKey);
  }
  return { balance: state!.balance, duplicate: true };
}

