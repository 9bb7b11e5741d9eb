// The credit ledger, against both stores (both-stores.ts): what a caller is charged and
// what the ledger keeps. What only several nodes can do is in postgres-two-nodes-ledger.test.ts.
import { expect, it } from 'vitest';
import { IdempotencyKeyReusedError } from '../../../server/store/errors.ts';
import { describeEachStore } from './both-stores.ts';
import type { StoreUnderTest } from './both-stores.ts';

describeEachStore('the credit ledger', (open) => {
  async function storeWithAccount(signupCreditCents = 0) {
    const opened = await open();
    const account = await opened.store.accounts.create({ email: 'ada@example.com', passwordHash: 'h', signupCreditCents });
    return { ...opened, accountId: account.id };
  }

  it('starts a new account with its signup credit', async () => {
    const { store, accountId } = await storeWithAccount(200);
    expect(await store.credits.balance(accountId)).toBe(200);
  });

  it('adds grants and subtracts debits', async () => {
    const { store, accountId } = await storeWithAccount();
    expect(await store.credits.grant(accountId, 200, 'signup', 'grant-1')).toEqual({ balance: 200, duplicate: false });
    expect(await store.credits.debit(accountId, 3, { idempotencyKey: 'minute-1', sessionId: 's1' })).toEqual({
      ok: true,
      balance: 197,
      duplicate: false,
    });
    await store.credits.debit(accountId, 3, { idempotencyKey: 'minute-2', sessionId: 's1' });
    expect(await store.credits.balance(accountId)).toBe(194);
  });

  it('charges a repeated idempotency key once and reports the repeat as a duplicate', async () => {
    const { store, accountId } = await storeWithAccount(200);
    await store.credits.debit(accountId, 3, { idempotencyKey: 'session-1:minute-1' });
    const repeat = await store.credits.debit(accountId, 3, { idempotencyKey: 'session-1:minute-1' });

    expect(repeat).toEqual({ ok: true, balance: 197, duplicate: true });
    expect(await store.credits.balance(accountId)).toBe(197);
    expect(await store.credits.grant(accountId, 200, 'signup', 'signup-again')).toMatchObject({ duplicate: false });
    expect(await store.credits.grant(accountId, 200, 'signup', 'signup-again')).toEqual({ balance: 397, duplicate: true });
  });

  it('records one entry for 100 concurrent debits with the same key', async () => {
    const opened = await storeWithAccount(200);
    const { store, accountId } = opened;
    const results = await Promise.all(
      Array.from({ length: 100 }, () => store.credits.debit(accountId, 3, { idempotencyKey: 'same-minute' })),
    );
    expect(results.filter((result) => result.ok && !result.duplicate)).toHaveLength(1);
    expect(results.every((result) => result.ok)).toBe(true);
    expect(await store.credits.balance(accountId)).toBe(197);
    expect(await ledgerRows(opened, accountId)).toBe(2);
  });

  it('refuses a debit larger than the balance and charges nothing', async () => {
    const opened = await storeWithAccount(2);
    const { store, accountId } = opened;
    expect(await store.credits.debit(accountId, 3, { idempotencyKey: 'too-much' })).toEqual({ ok: false, balance: 2 });
    expect(await store.credits.balance(accountId)).toBe(2);
    expect(await ledgerRows(opened, accountId)).toBe(1);
  });

  it('never goes negative under 200 debits started together: exactly floor(balance / cents) succeed', async () => {
    const { store, accountId } = await storeWithAccount(200);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, minute) =>
        store.credits.debit(accountId, 3, { idempotencyKey: `session-1:minute-${minute}`, sessionId: 'session-1' }),
      ),
    );

    expect(results.filter((result) => result.ok)).toHaveLength(Math.floor(200 / 3));
    expect(results.every((result) => result.balance >= 0)).toBe(true);
    expect(await store.credits.balance(accountId)).toBe(200 % 3);
  });

  it('rejects a key reused for a different amount or account', async () => {
    const { store, accountId } = await storeWithAccount(200);
    const other = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h', signupCreditCents: 200 });
    await store.credits.debit(accountId, 3, { idempotencyKey: 'k' });

    await expect(store.credits.debit(accountId, 5, { idempotencyKey: 'k' })).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    await expect(store.credits.debit(other.id, 3, { idempotencyKey: 'k' })).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await store.credits.balance(other.id)).toBe(200);
  });

  it('rejects amounts that are not whole cents', async () => {
    const { store, accountId } = await storeWithAccount(200);
    await expect(store.credits.debit(accountId, 1.5, { idempotencyKey: 'frac' })).rejects.toThrow(RangeError);
    await expect(store.credits.grant(accountId, -5, 'oops', 'neg')).rejects.toThrow(RangeError);
    expect(await store.credits.balance(accountId)).toBe(200);
  });

  it('keeps balances separate per account', async () => {
    const { store, accountId } = await storeWithAccount(200);
    const other = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h', signupCreditCents: 200 });
    await store.credits.debit(accountId, 50, { idempotencyKey: 'a-1' });
    expect(await store.credits.balance(other.id)).toBe(200);
    expect(await store.credits.balance('no-such-account')).toBe(0);
  });
});

async function ledgerRows(opened: StoreUnderTest, accountId: string): Promise<number> {
  const [row] = await opened.rows<{ n: number }>('SELECT COUNT(*) AS n FROM credit_ledger WHERE account_id = ?', [accountId]);
  return row!.n;
}

