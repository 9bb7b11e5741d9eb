// The credit ledger with two nodes on one PostgreSQL (docs/hosting.md#several-nodes-on-postgresql):
// debits made through both at once never overdraw and never charge one idempotency key twice, and
// the unique key still answers as the embedded store does when two accounts race with it.
import { describe, expect, it } from 'vitest';
import { IdempotencyKeyReusedError } from '../../../server/store/errors.ts';
import { postgresNodesForThisFile } from './postgres-nodes.ts';

const nodes = postgresNodesForThisFile();

describe('debits through two nodes at once', () => {
  it('never overdraw: of 200 debits of 3 cents against 200 cents spread over both nodes, exactly 66 succeed', async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h', signupCreditCents: 200 });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, minute) =>
        (minute % 2 === 0 ? a : b).credits.debit(account.id, 3, { idempotencyKey: `s1:minute:${minute}`, sessionId: 's1' }),
      ),
    );

    expect(results.filter((result) => result.ok)).toHaveLength(66);
    expect(results.every((result) => result.balance >= 0)).toBe(true);
    expect(await a.credits.balance(account.id)).toBe(2);
    expect(await b.credits.balance(account.id)).toBe(2);
    // What each debit reported is a balance the ledger really passed through: 66 distinct ones.
    const reported = results.filter((result) => result.ok).map((result) => result.balance);
    expect(new Set(reported).size).toBe(66);
  });

  it('charges each key once when every debit is sent to both nodes at the same moment', async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h', signupCreditCents: 1000 });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, minute) => [a, b].map((node) => node.credits.debit(account.id, 5, { idempotencyKey: `s1:minute:${minute}` }))).flat(),
    );

    expect(results.every((result) => result.ok)).toBe(true);
    expect(results.filter((result) => result.ok && result.duplicate)).toHaveLength(100);
    expect(await b.credits.balance(account.id)).toBe(1000 - 100 * 5);
    const [row] = await a.pg.rows<{ n: number }>('SELECT COUNT(*) AS n FROM credit_ledger WHERE account_id = $1 AND delta_cents < 0', [account.id]);
    expect(row!.n).toBe(100);
  });

  it('tells the account that loses a race for one key that the key was used, and charges it nothing', async () => {
    const [a, b] = await nodes.twoNodes();
    const ada = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h', signupCreditCents: 100 });
    const bo = await b.accounts.create({ email: 'bo@example.com', passwordHash: 'h', signupCreditCents: 100 });
    // Two accounts' debits do not wait on each other's row lock: only the key's unique index decides.
    for (let round = 0; round < 10; round++) {
      const key = `shared-key-${round}`;
      const outcomes = await Promise.allSettled([
        a.credits.debit(ada.id, 1, { idempotencyKey: key }),
        b.credits.debit(bo.id, 1, { idempotencyKey: key }),
      ]);
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const lost = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(IdempotencyKeyReusedError);
    }
    expect((await a.credits.balance(ada.id)) + (await b.credits.balance(bo.id))).toBe(200 - 10);
  });

  it('grants and debits interleaved on both nodes add up to the sum of what each said it did', async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const operations = Array.from({ length: 120 }, (_, i) => {
      const node = i % 2 === 0 ? a : b;
      return i % 3 === 0
        ? node.credits.grant(account.id, 7, 'top_up', `grant-${i}`).then(() => 7)
        : node.credits.debit(account.id, 4, { idempotencyKey: `debit-${i}` }).then((result) => (result.ok ? -4 : 0));
    });
    const deltas = await Promise.all(operations);
    const expected = deltas.reduce((sum, delta) => sum + delta, 0);
    expect(await a.credits.balance(account.id)).toBe(expected);
    expect(expected).toBeGreaterThanOrEqual(0);
  });
});
