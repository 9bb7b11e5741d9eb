// The embedded store runs in a worker thread (server/store/sqljs/worker-store.ts). If
// that thread dies, the store is unavailable as on a full disk: every call that needs it is a
// 503 store_unavailable and /health says so, while the server itself keeps answering what needs
// no store, and a call in progress carries on until it needs the store (its next minute's charge).
import { describe, expect, it } from 'vitest';
import type { WorkerEmbeddedStore } from '../../server/store/sqljs/worker-store.ts';
import { useVoiceRig } from '../support/voice-server.ts';

describe('the store worker dies in the middle of a call', () => {
  const rig = useVoiceRig({
    rules: [
      { when: { lastRole: 'none' }, respond: { text: 'Hello!' } },
      { when: { lastRole: 'user' }, respond: { text: 'Still here.' } },
    ],
  });

  it('answers 503 store_unavailable to what needs the store and 503 degraded on /health, and keeps serving the rest', { timeout: 20_000 }, async () => {
    const client = await rig.connect();
    const sessionId = (await client.waitFor('session_started')).session_id;
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Hello!');
    const before = await rig.server.request('GET', '/health');
    expect(before.body).toMatchObject({ status: 'ok', store_writable: true });

    // The greeting used the model, so its first minute is charged: once that charge is on disk
    // (and so answered), the call needs the store again only for its next minute's charge. A
    // charge that cannot be recorded ends a call ('error'), with a store worker gone as on a full disk.
    const store = rig.server.app.services.store as WorkerEmbeddedStore;
    await expect.poll(async () => (await store.rows('SELECT 1 FROM credit_ledger WHERE session_id = ?', [sessionId])).length).toBe(1);
    await expect.poll(async () => { const stats = await store.stats(); return stats.durableSeq === stats.lastSeq; }).toBe(true);
    await store.worker.terminate();

    const list = await rig.server.request('GET', '/v1/flows', { apiKey: rig.account.apiKey });
    expect(list.status).toBe(503);
    expect(list.body.error.code).toBe('store_unavailable');
    const signup = await rig.server.request('POST', '/auth/signup', { body: { email: 'after-the-worker@example.com', password: 'correct horse battery staple' } });
    expect(signup.status).toBe(503);
    expect(signup.body.error.code).toBe('store_unavailable');

    const health = await rig.server.request('GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'degraded', store_writable: false, service: 'voxflow' });
    const capabilities = await rig.server.request('GET', '/capabilities');
    expect(capabilities.status).toBe(200);

    // The call holds what it needs in memory: a typed turn is still answered.
    client.send({ type: 'text', text: 'Are you there?' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Still here.');
  });
});
