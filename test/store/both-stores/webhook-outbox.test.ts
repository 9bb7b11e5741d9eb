// The webhook outbox in the store (docs/api.md#what-a-call-leaves-behind), against both stores
// (both-stores.ts): what is enqueued falls due in order, keeps every attempt, is given
// up with its endpoint, and an end that a crash kept out of the outbox is found again. Surviving a
// reopen is the sql.js journal's promise and stays sql.js-only below; two nodes running the outbox
// at once is postgres-two-nodes-outbox.test.ts.
//
// On PostgreSQL due() claims what it hands out (a lease, so another node does not send it too):
// the tests below ask for each delivery once per attempt, as the dispatcher does, so they hold
// for both stores.
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../server/store/sqljs/store.ts';
import type { NewWebhookDelivery, Store } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';
import { closeAfterTest, tempDataDir } from '../helpers.ts';

async function addEndpoint(store: Store) {
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h1' });
  const webhook = await store.webhooks.create({ id: 'wh1', accountId: account.id, url: 'https://example.com/hooks', events: ['session.started', 'session.ended'], secretEnc: 'sealed' });
  return { account, webhook };
}

function delivery(id: string, accountId: string, createdAt: number, type = 'session.started'): NewWebhookDelivery {
  return { id, webhookId: 'wh1', accountId, sessionId: 's1', eventType: type, payload: JSON.stringify({ type, n: id }), createdAt };
}

describeEachStore('the webhook outbox', (open) => {
  async function storeWithEndpoint() {
    const { store } = await open();
    return { store, ...(await addEndpoint(store)) };
  }

  it('lists endpoints newest first, finds one, and names the ones that take an event', async () => {
    const clock = { now: 1_000 };
    const { store } = await open({ now: () => clock.now });
    const { account, webhook } = await addEndpoint(store);
    const second = await store.webhooks.create({ id: 'wh2', accountId: account.id, url: 'https://example.com/other', events: ['session.ended'], secretEnc: 'sealed2' });
    // Made in the same clock tick: still newest first.
    const third = await store.webhooks.create({ id: 'wh3', accountId: account.id, url: 'https://example.com/third', events: ['session.started'], secretEnc: 'sealed3' });
    expect(await store.webhooks.listByAccount(account.id)).toEqual([third, second, webhook]);
    expect(webhook).toEqual({ id: 'wh1', accountId: account.id, url: 'https://example.com/hooks', events: ['session.started', 'session.ended'], secretEnc: 'sealed', createdAt: 1_000 });
    expect(await store.webhooks.find(account.id, 'wh2')).toEqual(second);
    expect((await store.webhooks.subscribers(account.id, 'session.ended')).map((w) => w.id)).toEqual(['wh2', 'wh1']);
    const other = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h2' });
    expect(await store.webhooks.find(other.id, 'wh2')).toBeNull();
    expect(await store.webhooks.listByAccount(other.id)).toEqual([]);
  });

  it('hands out what is due, soonest first, and says when the next one falls due', async () => {
    const { store, account } = await storeWithEndpoint();
    expect(await store.webhooks.nextDueAt()).toBeNull();
    await store.webhooks.enqueue([delivery('m2', account.id, 200), delivery('m3', account.id, 300), delivery('m1', account.id, 100)]);
    expect(await store.webhooks.nextDueAt()).toBe(100);
    expect(await store.webhooks.due(50, 10)).toEqual([]);
    expect((await store.webhooks.due(250, 10)).map((d) => [d.id, d.status, d.attempts, d.nextAttemptAt, d.payload])).toEqual([
      ['m1', 'pending', 0, 100, JSON.stringify({ type: 'session.started', n: 'm1' })],
      ['m2', 'pending', 0, 200, JSON.stringify({ type: 'session.started', n: 'm2' })],
    ]);
  });

  it('leaves out the endpoints and accounts the dispatcher is not taking, so their backlog never hides another account', async () => {
    const { store, account } = await storeWithEndpoint();
    await store.webhooks.create({ id: 'wh3', accountId: account.id, url: 'https://example.com/third', events: ['session.started'], secretEnc: 'sealed3' });
    const other = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h2' });
    await store.webhooks.create({ id: 'wh2', accountId: other.id, url: 'https://example.com/bo', events: ['session.started'], secretEnc: 'sealed2' });
    await store.webhooks.enqueue([
      ...['a1', 'a2', 'a3', 'a4'].map((id, i) => delivery(id, account.id, 100 + i)),
      { ...delivery('c1', account.id, 104), webhookId: 'wh3' },
      { ...delivery('b1', other.id, 200), webhookId: 'wh2' },
    ]);
    // Oldest first, the first account's backlog would fill a batch of two.
    expect((await store.webhooks.due(1_000, 2, { accounts: [account.id] })).map((d) => d.id)).toEqual(['b1']);
    expect((await store.webhooks.due(1_000, 10, { webhooks: ['wh1'] })).map((d) => d.id)).toEqual(['c1', 'b1']);
    expect((await store.webhooks.due(1_000, 10, { webhooks: ['wh1', 'wh3'], accounts: [other.id] })).map((d) => d.id)).toEqual([]);
    // Nothing was lost by being left out.
    expect((await store.webhooks.due(1_000, 10)).map((d) => d.id)).toEqual(['a1', 'a2', 'a3', 'a4', 'c1', 'b1']);
  });

  it('records each attempt, waits out a retry, and lists the attempts in order', async () => {
    const { store, account } = await storeWithEndpoint();
    await store.webhooks.enqueue([delivery('m1', account.id, 100)]);
    await store.webhooks.recordAttempt('m1', { attempt: { at: 101, statusCode: 503, error: 'the receiver answered 503', durationMs: 12 }, status: 'pending', nextAttemptAt: 131 });
    expect(await store.webhooks.nextDueAt()).toBe(131);
    expect(await store.webhooks.due(130, 10)).toEqual([]);
    expect((await store.webhooks.due(131, 10)).map((d) => d.attempts)).toEqual([1]);
    await store.webhooks.recordAttempt('m1', { attempt: { at: 131, statusCode: 200, error: null, durationMs: 8 }, status: 'delivered', nextAttemptAt: null });
    expect(await store.webhooks.due(10_000, 10)).toEqual([]);
    expect(await store.webhooks.nextDueAt()).toBeNull();
    const [listed] = await store.webhooks.listDeliveries('wh1', 10);
    expect(listed).toMatchObject({ id: 'm1', status: 'delivered', attempts: 2, deliveredAt: 131, lastAttemptAt: 131, nextAttemptAt: null });
    expect(listed!.attemptLog.map((a) => [a.attempt, a.at, a.statusCode, a.error, a.durationMs])).toEqual([
      [1, 101, 503, 'the receiver answered 503', 12],
      [2, 131, 200, null, 8],
    ]);

    // Retry now makes even a delivered one due again, under the same id.
    expect(await store.webhooks.retryNow('wh1', 'm1', 500)).toBe(true);
    expect((await store.webhooks.due(500, 10)).map((d) => d.id)).toEqual(['m1']);
    expect(await store.webhooks.retryNow('wh1', 'nope', 500)).toBe(false);
  });

  it('lists an endpoint’s deliveries newest first, at most the limit', async () => {
    const { store, account } = await storeWithEndpoint();
    await store.webhooks.enqueue([delivery('m1', account.id, 100), delivery('m2', account.id, 100), delivery('m3', account.id, 200)]);
    expect((await store.webhooks.listDeliveries('wh1', 10)).map((d) => d.id)).toEqual(['m3', 'm2', 'm1']);
    expect((await store.webhooks.listDeliveries('wh1', 2)).map((d) => d.id)).toEqual(['m3', 'm2']);
    expect(await store.webhooks.listDeliveries('wh-unknown', 10)).toEqual([]);
  });

  it('gives up the pending deliveries of a deleted endpoint', async () => {
    const { store, account } = await storeWithEndpoint();
    await store.webhooks.enqueue([delivery('m1', account.id, 100)]);
    expect(await store.webhooks.remove(account.id, 'wh1')).toBe(true);
    expect(await store.webhooks.due(1_000, 10)).toEqual([]);
    expect(await store.webhooks.nextDueAt()).toBeNull();
    expect((await store.webhooks.listDeliveries('wh1', 10)).map((d) => [d.id, d.status])).toEqual([['m1', 'failed']]);
    expect(await store.webhooks.listByAccount(account.id)).toEqual([]);
    expect(await store.webhooks.find(account.id, 'wh1')).toBeNull();
    expect(await store.webhooks.remove(account.id, 'wh1')).toBe(false);
  });

  it('finds an ended session whose session.ended never reached the outbox, and only that one', async () => {
    const { store, account } = await storeWithEndpoint();
    const session = (name: string) => store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: { name } });
    const lost = await session('lost');
    const sent = await session('sent');
    const live = await session('live');
    const now = Date.now() / 1000 + 10;
    await store.sessions.end(lost.id, { endedAt: now, reason: 'client_ended', creditsChargedCents: 0 });
    await store.sessions.end(sent.id, { endedAt: now, reason: 'client_ended', creditsChargedCents: 0 });
    await store.webhooks.enqueue([{ ...delivery('m-sent', account.id, now, 'session.ended'), sessionId: sent.id }]);
    expect(live.status).toBe('connected');
    expect(await store.webhooks.missingEnds(now - 60, 10)).toEqual([lost.id]);
    // Not before the window, and not once the endpoint is gone.
    expect(await store.webhooks.missingEnds(now + 1, 10)).toEqual([]);
    await store.webhooks.remove(account.id, 'wh1');
    expect(await store.webhooks.missingEnds(now - 60, 10)).toEqual([]);
  });

  it('forgets old deliveries once done, never a pending one', async () => {
    const { store, account } = await storeWithEndpoint();
    await store.webhooks.enqueue([delivery('old-done', account.id, 100), delivery('old-pending', account.id, 100), delivery('new-done', account.id, 900)]);
    for (const id of ['old-done', 'new-done']) await store.webhooks.recordAttempt(id, { attempt: { at: 901, statusCode: 200, error: null, durationMs: 1 }, status: 'delivered', nextAttemptAt: null });
    expect(await store.webhooks.purgeBefore(500, 100)).toBe(1);
    expect((await store.webhooks.listDeliveries('wh1', 10)).map((d) => d.id).sort()).toEqual(['new-done', 'old-pending']);
    expect(await store.webhooks.purgeBefore(500, 100)).toBe(0);
  });
});

describe('the webhook outbox in the embedded store', () => {
  it('keeps enqueued deliveries across a reopen (the journal replays them)', async () => {
    const dataDir = await tempDataDir();
    const store = await openStore({ dataDir });
    const { account } = await addEndpoint(store);
    await store.webhooks.enqueue([delivery('m2', account.id, 200), delivery('m1', account.id, 100)]);
    await store.close();

    const reopened = closeAfterTest(await openStore({ dataDir }));
    expect(await reopened.webhooks.nextDueAt()).toBe(100);
    expect((await reopened.webhooks.due(1_000, 10)).map((d) => [d.id, d.status, d.attempts, d.payload])).toEqual([
      ['m1', 'pending', 0, JSON.stringify({ type: 'session.started', n: 'm1' })],
      ['m2', 'pending', 0, JSON.stringify({ type: 'session.started', n: 'm2' })],
    ]);
  });
});
