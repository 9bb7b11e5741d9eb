// Claiming and ending a session token, against both stores (both-stores.ts); a claim
// surviving a crash is the sql.js journal's promise and stays sql.js-only below. A token claimed
// by exactly one of two nodes is in postgres-two-nodes-claim.test.ts.
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../server/store/sqljs/store.ts';
import type { Store } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';
import { closeAfterTest, copyAsIfCrashed, tempDataDir } from '../helpers.ts';

const T0 = 1_700_000_000;

async function createSession(store: Store, expiresIn = 600) {
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
  return store.sessions.create({
    accountId: account.id,
    flowId: null,
    tokenHash: 'token-hash',
    tokenPrefix: 'abcdefghijkl',
    transport: 'websocket',
    mode: 'assistant',
    context: {},
    metadata: {},
    expiresAt: T0 + expiresIn,
  });
}

describeEachStore('session tokens', (open) => {
  async function storeWithSession(expiresIn = 600) {
    const { store } = await open({ now: () => T0 });
    return { store, session: await createSession(store, expiresIn) };
  }

  describe('claiming a session token', () => {
    it('connects the session the first time and refuses the token afterwards', async () => {
      const { store, session } = await storeWithSession();

      const claimed = await store.sessions.claim('token-hash', T0 + 5);
      expect(claimed).toEqual({ ...session, status: 'connected', startedAt: T0 + 5 });
      expect(await store.sessions.claim('token-hash', T0 + 6)).toBeNull();
      expect((await store.sessions.findByTokenHash('token-hash'))!.startedAt).toBe(T0 + 5);
    });

    it('lets exactly one of many simultaneous connections win', async () => {
      const { store } = await storeWithSession();
      const claims = await Promise.all(Array.from({ length: 20 }, () => store.sessions.claim('token-hash', T0 + 1)));
      expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    });

    it('refuses an expired token and an unknown one', async () => {
      const { store } = await storeWithSession(600);
      expect(await store.sessions.claim('token-hash', T0 + 600)).toBeNull();
      expect(await store.sessions.claim('other-hash', T0 + 1)).toBeNull();
      expect((await store.sessions.findByTokenHash('token-hash'))!.status).toBe('created');
    });
  });

  describe('ending a session', () => {
    it('records the end, the rounded duration and the charge, once', async () => {
      const { store, session } = await storeWithSession();
      await store.sessions.claim('token-hash', T0 + 10);

      const ended = await store.sessions.end(session.id, { endedAt: T0 + 10 + 125.6, reason: 'client_end', creditsChargedCents: 9 });
      expect(ended).toMatchObject({ status: 'ended', endedAt: T0 + 135.6, durationSecs: 126, endReason: 'client_end', creditsChargedCents: 9 });

      const again = await store.sessions.end(session.id, { endedAt: T0 + 999, reason: 'timeout', creditsChargedCents: 99 });
      expect(again).toEqual(ended);
      expect(await store.sessions.claim('token-hash', T0 + 11)).toBeNull();
    });

    it('rounds a half second up and keeps a duration the session measured as it is', async () => {
      const { store, session } = await storeWithSession();
      await store.sessions.claim('token-hash', T0 + 10);
      expect(await store.sessions.end(session.id, { endedAt: T0 + 12.5, reason: 'client_end', creditsChargedCents: 0 })).toMatchObject({ durationSecs: 3 });

      const other = await store.sessions.createConnected({ accountId: session.accountId, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} });
      expect(await store.sessions.end(other.id, { endedAt: T0 + 50, reason: 'client_end', creditsChargedCents: 0, durationSecs: 7 })).toMatchObject({
        durationSecs: 7,
      });
    });

    it('gives a session that never connected a duration of zero', async () => {
      const { store, session } = await storeWithSession();
      const ended = await store.sessions.end(session.id, { endedAt: T0 + 700, reason: 'expired', creditsChargedCents: 0 });
      expect(ended).toMatchObject({ status: 'ended', startedAt: null, durationSecs: 0 });
      expect(await store.sessions.end('no-such-session', { endedAt: T0, reason: 'x', creditsChargedCents: 0 })).toBeNull();
    });
  });
});

describe('a claimed token after a crash [sql.js]', () => {
  it('stays used: the claim was journaled before it was acknowledged', async () => {
    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir, now: () => T0 }));
    await createSession(store);
    await store.sessions.claim('token-hash', T0 + 1);

    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir), now: () => T0 }));
    expect(await afterCrash.sessions.claim('token-hash', T0 + 2)).toBeNull();
  });
});
