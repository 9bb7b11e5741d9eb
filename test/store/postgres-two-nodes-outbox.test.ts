// Two nodes running the webhook outbox on one PostgreSQL (issue 19, DESIGN §15), below the
// dispatcher: their due() calls claim deliveries, so of 200 events asked for at once by both
// nodes each is handed to exactly one; a delivery claimed by a node that then died is handed out
// again, under the same id, once the claim's lease has run out.
import { describe, expect, it } from 'vitest';
import { DELIVERY_LEASE_SECONDS } from '../../server/store/postgres/webhooks.ts';
import type { NewWebhookDelivery, Store } from '../../server/store/store.ts';
import { postgresNodesForThisFile } from './postgres-nodes.ts';

const nodes = postgresNodesForThisFile();

async function twoNodesWithEndpoint() {
  const [a, b] = await nodes.twoNodes();
  const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
  await a.webhooks.create({ id: 'wh1', accountId: account.id, url: 'https://example.com/hooks', events: ['session.ended'], secretEnc: 'sealed' });
  return { a, b, accountId: account.id };
}

function delivery(id: string, accountId: string, createdAt: number): NewWebhookDelivery {
  return { id, webhookId: 'wh1', accountId, sessionId: null, eventType: 'session.ended', payload: JSON.stringify({ id }), createdAt };
}

describe('the outbox run by two nodes', () => {
  it('hands each of 200 due deliveries to exactly one node when both ask at once, batch after batch', async () => {
    const { a, b, accountId } = await twoNodesWithEndpoint();
    const ids = Array.from({ length: 200 }, (_, i) => `m${i}`);
    await a.webhooks.enqueue(ids.map((id, i) => delivery(id, accountId, 1_000 + (i % 10))));
    const handed = new Map<string, number>();
    const now = 2_000;
    // Each node asks for small batches as fast as it can and records a delivery for what it got,
    // as the dispatcher does, until neither gets anything.
    const run = async (node: Store) => {
      for (;;) {
        const batch = await node.webhooks.due(now, 7);
        if (batch.length === 0) return;
        for (const d of batch) {
          handed.set(d.id, (handed.get(d.id) ?? 0) + 1);
          await node.webhooks.recordAttempt(d.id, { attempt: { at: now, statusCode: 200, error: null, durationMs: 1 }, status: 'delivered', nextAttemptAt: null });
        }
      }
    };
    await Promise.all([run(a), run(b), run(a), run(b)]);
    expect([...handed.keys()].sort()).toEqual([...ids].sort());
    expect([...handed.values()].filter((times) => times !== 1)).toEqual([]);
    const listed = await b.webhooks.listDeliveries('wh1', 500);
    expect(listed.filter((d) => d.status !== 'delivered' || d.attemptLog.length !== 1)).toEqual([]);
    expect(await a.webhooks.nextDueAt()).toBeNull();
  });

  it('hands a delivery claimed by a node that died to the other node once the lease runs out, under the same id', async () => {
    const { a, b, accountId } = await twoNodesWithEndpoint();
    await a.webhooks.enqueue([delivery('m1', accountId, 100)]);
    const claimed = await a.webhooks.due(100, 10);
    expect(claimed.map((d) => [d.id, d.nextAttemptAt])).toEqual([['m1', 100]]);
    // Node A dies mid-delivery: nothing is recorded.
    await a.close();
    expect(await b.webhooks.due(100 + DELIVERY_LEASE_SECONDS - 1, 10)).toEqual([]);
    const again = await b.webhooks.due(100 + DELIVERY_LEASE_SECONDS, 10);
    expect(again.map((d) => [d.id, d.payload, d.attempts])).toEqual([['m1', JSON.stringify({ id: 'm1' }), 0]]);
    await b.webhooks.recordAttempt('m1', { attempt: { at: 200, statusCode: 200, error: null, durationMs: 1 }, status: 'delivered', nextAttemptAt: null });
    expect(await b.webhooks.due(10_000, 10)).toEqual([]);
  });
});
