// Each ended session's analysis in the store (repositories/analyses.ts), against both stores: opened
// once, claimed by one worker at a time, completed once together with its webhook deliveries, and
// found again when an earlier run left it unfinished.
import { expect, it } from 'vitest';
import type { Store } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';

async function endedSession(store: Store, accountId: string, flowId: string) {
  const session = await store.sessions.createConnected({ accountId, flowId, transport: 'websocket', mode: 'flow', context: {}, metadata: {} });
  await store.sessions.end(session.id, { endedAt: Date.now() / 1000, reason: 'client_ended', creditsChargedCents: 0 });
  return session.id;
}

describeEachStore('session analyses in the store', (open) => {
  it('are opened once, claimed, and completed once with their deliveries in the same write', async () => {
    const { store } = await open();
    const account = await store.accounts.create({ email: `ada${Math.random()}@example.com`, passwordHash: 'h' });
    const flow = await store.flows.create({ accountId: account.id, name: 'f', yamlContent: 'id: f' });
    const hook = await store.webhooks.create({ id: `wh_${Math.random()}`, accountId: account.id, url: 'https://example.com/h', events: ['session.analyzed'], secretEnc: 'x' });
    const id = await endedSession(store, account.id, flow.id);
    const other = await endedSession(store, account.id, flow.id);

    // Both ended sessions are left to do: no analysis opened yet.
    expect((await store.analyses.unfinished(0, 10, true)).sort()).toEqual([id, other].sort());
    await store.analyses.open(id, account.id, 'pending');
    await store.analyses.open(id, account.id, 'none');
    expect(await store.analyses.get(id)).toMatchObject({ state: 'pending', success: null, result: null });
    await store.analyses.open(other, account.id, 'none');
    expect(await store.analyses.unfinished(0, 10, true)).toEqual([id]);
    expect(await store.analyses.unfinished(0, 10, false)).toEqual([id]);

    expect(await store.analyses.claim(id, Date.now() / 1000 + 120)).toBe(true);
    // This node's own live claim is not left over work.
    expect(await store.analyses.unfinished(0, 10, true)).toEqual([]);
    expect(await store.analyses.claim(other, Date.now() / 1000 + 120)).toBe(false);

    const delivery = { id: `msg_${Math.random()}`, webhookId: hook.id, accountId: account.id, sessionId: id, eventType: 'session.analyzed', payload: '{"type":"session.analyzed"}', createdAt: Date.now() / 1000 };
    expect(await store.analyses.complete(id, { outcome: { values: { booked: true } } }, 'true', [delivery])).toBe(true);
    expect(await store.analyses.complete(id, { outcome: null }, 'false', [{ ...delivery, id: `msg_${Math.random()}` }])).toBe(false);
    expect(await store.analyses.get(id)).toMatchObject({ state: 'done', success: 'true', result: { outcome: { values: { booked: true } } } });
    expect((await store.webhooks.listDeliveries(hook.id, 10)).map((d) => d.id)).toEqual([delivery.id]);
    expect(await store.analyses.claim(id, Date.now() / 1000 + 120)).toBe(false);

    expect(await store.analyses.successOf([id, other, 'nope'])).toEqual(new Map([[id, 'true']]));
    const listed = await store.sessions.listRecent(account.id, 10, { success: 'true' });
    expect(listed.map((s) => s.id)).toEqual([id]);
    expect(await store.sessions.listRecent(account.id, 10, { success: 'unknown' })).toEqual([]);
  });
});
