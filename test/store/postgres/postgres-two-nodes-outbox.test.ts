// Two nodes running the webhook outbox on one PostgreSQL
// (docs/hosting.md#several-nodes-on-postgresql), below the dispatcher: their due() calls claim
// deliveries, so of 200 events asked for at once by both nodes each is handed to exactly one; what
// a node claimed and has not attempted yet comes back to it, never to the other; a delivery claimed
// by a node that then died is handed out again, under the same id, once the claim's lease has run
// out.
import { describe, expect, it } from 'vitest';
import { DELIVERY_LEASE_SECONDS } from '../../../server/store/postgres/webhooks.ts';
import type { NewWebhookDelivery, Store } from '../../../server/store/store.ts';
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
  it("puts a session's session.ended in the outbox once when two nodes write it at once (the call's node and one recovering missed ends)", async () => {
    const { a, b, accountId } = await twoNodesWithEndpoint();
    const ended = (id: string): NewWebhookDelivery => ({ ...delivery(id, accountId, 500), sessionId: 'sess-1' });
    for (let round = 0; round < 5; round++) {
      await Promise.all([a.webhooks.enqueue([ended(`a${round}`)]), b.webhooks.enqueue([ended(`b${round}`)])]);
    }
    const rows = (await a.webhooks.listDeliveries('wh1', 50)).filter((d) => d.sessionId === 'sess-1');
    expect(rows).toHaveLength(1);
    // Other events of the session, and other sessions' ends, are not held back by it.
    await b.webhooks.enqueue([{ ...ended('other'), sessionId: 'sess-2' }, { ...ended('tool'), eventType: 'session.tool_called' }]);
    expect((await a.webhooks.listDeliveries('wh1', 50)).map((d) => d.id).sort()).toEqual([rows[0]!.id, 'other', 'tool'].sort());
  });

  it('hands each of 200 due deliveries to exactly one node when both ask at once, batch after batch', async () => {
    const { a, b, accountId } = await twoNodesWithEndpoint();
    const ids = Array.from({ length: 200 }, (_, i) => `m${i}`);
    await a.webhooks.enqueue(ids.map((id, i) => delivery(id, accountId, 1_000 + (i % 10))));
    const handedTo = new Map<string, string[]>();
    const now = 2_000;
    // Each node, as its dispatcher does, asks for a batch, records an attempt for each delivery
    // in it, and asks again, until it gets nothing.
    const run = async (node: Store, name: string) => {
      for (;;) {
        const batch = await node.webhooks.due(now, 7);
        if (batch.length === 0) return;
        for (const d of batch) {
          handedTo.set(d.id, [...(handedTo.get(d.id) ?? []), name]);
          await node.webhooks.recordAttempt(d.id, { attempt: { at: now, statusCode: 200, error: null, durationMs: 1 }, status: 'delivered', nextAttemptAt: null });
        }
      }
    };
    await Promise.all([run(a, 'A'), run(b, 'B')]);
    expect([...handedTo.keys()].sort()).toEqual([...ids].sort());
    expect([...handedTo.entries()].filter(([, nodes]) => nodes.length !== 1)).toEqual([]);
    // Both took part: the claims share the work out rather than serialising it on one node.
    const byNode = [...handedTo.values()].flat();
    expect(byNode.filter((node) => node === 'A').length).toBeGreaterThan(0);
    expect(byNode.filter((node) => node === 'B').length).toBeGreaterThan(0);
    const listed = await b.webhooks.listDeliveries('wh1', 500);
    expect(listed.filter((d) => d.status !== 'delivered' || d.attemptLog.length !== 1)).toEqual([]);
    expect(await a.webhooks.nextDueAt()).toBeNull();
  });

  it("gives a node back its own claims it has not attempted yet, never the other node, until it records an attempt", async () => {
    const { a, b, accountId } = await twoNodesWithEndpoint();
    await a.webhooks.enqueue(['m1', 'm2', 'm3', 'm4'].map((id, i) => delivery(id, accountId, 100 + i)));
    // The dispatcher may start only two of four (two attempts per endpoint): the others stay its own.
    expect((await a.webhooks.due(200, 10)).map((d) => d.id)).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(await b.webhooks.due(200, 10)).toEqual([]);
    for (const id of ['m1', 'm2']) await a.webhooks.recordAttempt(id, { attempt: { at: 201, statusCode: 200, error: null, durationMs: 1 }, status: 'delivered', nextAttemptAt: null });
    expect((await a.webhooks.due(202, 10)).map((d) => [d.id, d.nextAttemptAt])).toEqual([['m3', 102], ['m4', 103]]);
    expect(await b.webhooks.due(202, 10)).toEqual([]);
    // Asking again renews the lease: past the first lease the other node still gets nothing.
    expect(await b.webhooks.due(200 + DELIVERY_LEASE_SECONDS + 1, 10)).toEqual([]);
    // A retry recorded for later is not handed back early.
    await a.webhooks.recordAttempt('m3', { attempt: { at: 203, statusCode: 503, error: 'the receiver answered 503', durationMs: 1 }, status: 'pending', nextAttemptAt: 230 });
    expect((await a.webhooks.due(204, 10)).map((d) => d.id)).toEqual(['m4']);
    expect((await b.webhooks.due(230, 10)).map((d) => [d.id, d.attempts])).toEqual([['m3', 1]]);
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
