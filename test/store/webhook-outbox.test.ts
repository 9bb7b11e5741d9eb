// The webhook outbox in the store (DESIGN §11): what is enqueued survives a reopen, falls due in
// order, keeps every attempt, is given up with its endpoint, and an end that a crash kept out of
// the outbox is found again.
import { describe, expect, it } from 'vitest';
import { openStore, type NewWebhookDelivery } from '../../server/store/store.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

async function storeWithEndpoint(dataDir: string) {
  const store = closeAfterTest(await openStore({ dataDir }));
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h1' });
  const webhook = await store.webhooks.create({ id: 'wh1', accountId: account.id, url: 'https://example.com/hooks', events: ['session.started', 'session.ended'], secretEnc: 'sealed' });
  return { store, account, webhook };
}

function delivery(id: string, accountId: string, createdAt: number, type = 'session.started'): NewWebhookDelivery {
  return { id, webhookId: 'wh1', accountId, sessionId: 's1', eventType: type, payload: JSON.stringify({ type, n: id }), createdAt };
}

describe('the webhook outbox', () => {
  it('keeps enqueued deliveries across a reopen and hands them out due, soonest first', async () => {
    const dataDir = await tempDataDir();
    const { store, account } = await storeWithEndpoint(dataDir);
    await store.webhooks.enqueue([delivery('m2', account.id, 200), delivery('m1', account.id, 100)]);
    await store.close();

    const reopened = closeAfterTest(await openStore({ dataDir }));
    expect(reopened.webhooks.due(150, 10).map((d) => d.id)).toEqual(['m1']);
    expect(reopened.webhooks.due(1_000, 10).map((d) => [d.id, d.status, d.attempts, d.payload])).toEqual([
      ['m1', 'pending', 0, JSON.stringify({ type: 'session.started', n: 'm1' })],
      ['m2', 'pending', 0, JSON.stringify({ type: 'session.started', n: 'm2' })],
    ]);
    expect(reopened.webhooks.nextDueAt()).toBe(100);
  });

  it('records each attempt, waits out a retry, and lists the attempts in order', async () => {
    const { store, account } = await storeWithEndpoint(await tempDataDir());
    await store.webhooks.enqueue([delivery('m1', account.id, 100)]);
    await store.webhooks.recordAttempt('m1', { attempt: { at: 101, statusCode: 503, error: 'the receiver answered 503', durationMs: 12 }, status: 'pending', nextAttemptAt: 131 });
    expect(store.webhooks.due(130, 10)).toEqual([]);
    expect(store.webhooks.due(131, 10).map((d) => d.attempts)).toEqual([1]);
    await store.webhooks.recordAttempt('m1', { attempt: { at: 131, statusCode: 200, error: null, durationMs: 8 }, status: 'delivered', nextAttemptAt: null });
    expect(store.webhooks.due(10_000, 10)).toEqual([]);
    expect(store.webhooks.nextDueAt()).toBeNull();
    const [listed] = store.webhooks.listDeliveries('wh1', 10);
    expect(listed).toMatchObject({ id: 'm1', status: 'delivered', attempts: 2, deliveredAt: 131, lastAttemptAt: 131 });
    expect(listed!.attemptLog.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 503, 'the receiver answered 503'],
      [2, 200, null],
    ]);

    // Retry now makes even a delivered one due again, under the same id.
    expect(await store.webhooks.retryNow('wh1', 'm1', 500)).toBe(true);
    expect(store.webhooks.due(500, 10).map((d) => d.id)).toEqual(['m1']);
    expect(await store.webhooks.retryNow('wh1', 'nope', 500)).toBe(false);
  });

  it('gives up the pending deliveries of a deleted endpoint', async () => {
    const { store, account } = await storeWithEndpoint(await tempDataDir());
    await store.webhooks.enqueue([delivery('m1', account.id, 100)]);
    expect(await store.webhooks.remove(account.id, 'wh1')).toBe(true);
    expect(store.webhooks.due(1_000, 10)).toEqual([]);
    expect(store.webhooks.listByAccount(account.id)).toEqual([]);
    expect(store.webhooks.find(account.id, 'wh1')).toBeNull();
    expect(await store.webhooks.remove(account.id, 'wh1')).toBe(false);
  });

  it('finds an ended session whose session.ended never reached the outbox, and only that one', async () => {
    const { store, account } = await storeWithEndpoint(await tempDataDir());
    const session = (name: string) => store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: { name } });
    const lost = await session('lost');
    const sent = await session('sent');
    const live = await session('live');
    const now = Date.now() / 1000 + 10;
    await store.sessions.end(lost.id, { endedAt: now, reason: 'client_ended', creditsChargedCents: 0 });
    await store.sessions.end(sent.id, { endedAt: now, reason: 'client_ended', creditsChargedCents: 0 });
    await store.webhooks.enqueue([{ ...delivery('m-sent', account.id, now, 'session.ended'), sessionId: sent.id }]);
    expect(live.status).toBe('connected');
    expect(store.webhooks.missingEnds(now - 60, 10)).toEqual([lost.id]);
    // Not before the window, and not once the endpoint is gone.
    expect(store.webhooks.missingEnds(now + 1, 10)).toEqual([]);
    await store.webhooks.remove(account.id, 'wh1');
    expect(store.webhooks.missingEnds(now - 60, 10)).toEqual([]);
  });

  it('forgets old deliveries once done, never a pending one', async () => {
    const { store, account } = await storeWithEndpoint(await tempDataDir());
    await store.webhooks.enqueue([delivery('old-done', account.id, 100), delivery('old-pending', account.id, 100), delivery('new-done', account.id, 900)]);
    for (const id of ['old-done', 'new-done']) await store.webhooks.recordAttempt(id, { attempt: { at: 901, statusCode: 200, error: null, durationMs: 1 }, status: 'delivered', nextAttemptAt: null });
    expect(await store.webhooks.purgeBefore(500, 100)).toBe(1);
    expect(store.webhooks.listDeliveries('wh1', 10).map((d) => d.id).sort()).toEqual(['new-done', 'old-pending']);
  });
});
