// The repositories, against both stores (both-stores.ts): the same calls give the same
// answers on the embedded sql.js store and on PostgreSQL.
import { describe, expect, it } from 'vitest';
import { EmailTakenError } from '../../../server/store/errors.ts';
import type { Store } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';
import type { OpenTestStore } from './both-stores.ts';

/** A store whose clock is a counter the test moves by hand. */
async function storeWithClock(open: OpenTestStore) {
  const clock = { now: 1_700_000_000 };
  const opened = await open({ now: () => clock.now });
  return { ...opened, clock };
}

async function twoAccounts(store: Store) {
  const ada = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h1' });
  const bo = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h2' });
  return { ada, bo };
}

function sessionInput(accountId: string, tokenHash: string, expiresAt: number) {
  return {
    accountId,
    flowId: null,
    tokenHash,
    tokenPrefix: tokenHash.slice(0, 12),
    transport: 'websocket' as const,
    mode: 'assistant' as const,
    context: {},
    metadata: {},
    expiresAt,
  };
}

describeEachStore('the repositories', (open) => {
  describe('accounts', () => {
    it('creates an account and finds it by id and by email in any letter case', async () => {
      const { store, clock } = await storeWithClock(open);
      const account = await store.accounts.create({ email: 'Ada@Example.com', passwordHash: 'scrypt$1' });

      expect(account).toMatchObject({ email: 'Ada@Example.com', passwordHash: 'scrypt$1', createdAt: clock.now });
      expect(account.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(await store.accounts.findById(account.id)).toEqual(account);
      expect(await store.accounts.findByEmail('ada@example.COM')).toEqual(account);
      expect(await store.accounts.findByEmail('nobody@example.com')).toBeNull();
      expect(await store.accounts.findById('nope')).toBeNull();
    });

    it('rejects a second account with the same email, whatever its case', async () => {
      const { store, rows } = await storeWithClock(open);
      await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
      await expect(store.accounts.create({ email: 'ADA@example.com', passwordHash: 'h' })).rejects.toBeInstanceOf(EmailTakenError);
      expect((await rows<{ n: number }>('SELECT COUNT(*) AS n FROM accounts'))[0]!.n).toBe(1);
    });
  });

  describe('API keys', () => {
    it('lists an account’s active keys newest first and finds one by hash', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const older = await store.apiKeys.create({ accountId: ada.id, label: 'old', prefix: 'vfk_aaaaaaaa', keyHash: 'h-old' });
      clock.now += 1;
      const newer = await store.apiKeys.create({ accountId: ada.id, label: 'new', prefix: 'vfk_bbbbbbbb', keyHash: 'h-new' });

      expect(await store.apiKeys.listByAccount(ada.id)).toEqual([newer, older]);
      expect(newer).toMatchObject({ lastUsedAt: null, revokedAt: null, label: 'new', prefix: 'vfk_bbbbbbbb' });
      expect(await store.apiKeys.findActiveByHash('h-old')).toEqual(older);
      expect(await store.apiKeys.findActiveByHash('h-unknown')).toBeNull();
    });

    it('revokes a key at once, only for its own account, and only once', async () => {
      const { store } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const key = await store.apiKeys.create({ accountId: ada.id, label: 'ci', prefix: 'vfk_aaaaaaaa', keyHash: 'h-1' });

      expect(await store.apiKeys.revoke(bo.id, key.id)).toBe(false);
      expect(await store.apiKeys.findActiveByHash('h-1')).not.toBeNull();
      expect(await store.apiKeys.revoke(ada.id, key.id)).toBe(true);
      expect(await store.apiKeys.revoke(ada.id, key.id)).toBe(false);
      expect(await store.apiKeys.findActiveByHash('h-1')).toBeNull();
      expect(await store.apiKeys.listByAccount(ada.id)).toEqual([]);
    });

    it('records a use at most once a minute, without a write in between', async () => {
      const { store, writeMark } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const key = await store.apiKeys.create({ accountId: ada.id, label: 'ci', prefix: 'vfk_aaaaaaaa', keyHash: 'h-1' });
      const t0 = 1_700_000_100;

      const markBefore = await writeMark();
      expect(await store.apiKeys.touch(key.id, t0)).toBe(true);
      const markAfterFirstTouch = await writeMark();
      expect(markAfterFirstTouch).toBeGreaterThan(markBefore);
      expect(await store.apiKeys.touch(key.id, t0 + 30)).toBe(false);
      expect(await writeMark()).toBe(markAfterFirstTouch);
      expect((await store.apiKeys.findActiveByHash('h-1'))!.lastUsedAt).toBe(t0);
      expect(await store.apiKeys.touch(key.id, t0 + 60)).toBe(true);
      expect((await store.apiKeys.findActiveByHash('h-1'))!.lastUsedAt).toBe(t0 + 60);
      expect(await store.apiKeys.touch('no-such-key', t0)).toBe(false);
    });
  });

  describe('API keys and the tokens they asked for', () => {
    it('expires the unclaimed tokens of a revoked key, and only those', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const key = await store.apiKeys.create({ accountId: ada.id, label: 'ci', prefix: 'vfk_aaaaaaaa', keyHash: 'h-1' });
      const other = await store.apiKeys.create({ accountId: ada.id, label: 'web', prefix: 'vfk_bbbbbbbb', keyHash: 'h-2' });
      await store.sessions.create({ ...sessionInput(ada.id, 'claimed-first', clock.now + 600), apiKeyId: key.id });
      await store.sessions.create({ ...sessionInput(ada.id, 'unclaimed', clock.now + 600), apiKeyId: key.id });
      await store.sessions.create({ ...sessionInput(ada.id, 'other-key', clock.now + 600), apiKeyId: other.id });
      expect(await store.sessions.claim('claimed-first', clock.now)).not.toBeNull();

      clock.now += 1;
      expect(await store.apiKeys.revoke(ada.id, key.id)).toBe(true);
      expect(await store.sessions.claim('unclaimed', clock.now)).toBeNull();
      expect((await store.sessions.findByTokenHash('unclaimed'))!.expiresAt).toBe(clock.now);
      expect((await store.sessions.findByTokenHash('claimed-first'))!.status).toBe('connected');
      expect(await store.sessions.claim('other-key', clock.now)).not.toBeNull();
    });
  });

  describe('secrets', () => {
    it('puts, replaces, lists by name without values, gives the sealed values, and deletes', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const created = await store.secrets.put(ada.id, 'ZED_TOKEN', 'sealed-z');
      expect(created).toEqual({ created: true, secret: { name: 'ZED_TOKEN', createdAt: clock.now, updatedAt: clock.now } });
      const createdAt = clock.now;
      clock.now += 5;
      await store.secrets.put(ada.id, 'API_KEY', 'sealed-a');
      const replaced = await store.secrets.put(ada.id, 'ZED_TOKEN', 'sealed-z2');
      expect(replaced).toEqual({ created: false, secret: { name: 'ZED_TOKEN', createdAt, updatedAt: clock.now } });

      expect(await store.secrets.list(ada.id)).toEqual([
        { name: 'API_KEY', createdAt: clock.now, updatedAt: clock.now },
        { name: 'ZED_TOKEN', createdAt, updatedAt: clock.now },
      ]);
      expect((await store.secrets.sealed(ada.id)).map((secret) => secret.valueEnc)).toEqual(['sealed-a', 'sealed-z2']);
      expect(await store.secrets.list(bo.id)).toEqual([]);
      expect(await store.secrets.delete(bo.id, 'API_KEY')).toBe(false);
      expect(await store.secrets.delete(ada.id, 'API_KEY')).toBe(true);
      expect(await store.secrets.delete(ada.id, 'API_KEY')).toBe(false);
      expect((await store.secrets.list(ada.id)).map((secret) => secret.name)).toEqual(['ZED_TOKEN']);
    });

    it('lists names in byte order, capitals before small letters, as both stores compare them', async () => {
      const { store } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      for (const name of ['b_token', 'A_TOKEN', 'a_token', 'B_TOKEN', '_x']) await store.secrets.put(ada.id, name, 'sealed');
      expect((await store.secrets.list(ada.id)).map((secret) => secret.name)).toEqual(['A_TOKEN', 'B_TOKEN', '_x', 'a_token', 'b_token']);
    });
  });

  describe('flows', () => {
    it('creates, lists oldest first without YAML, gets, updates and deletes', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const first = await store.flows.create({ accountId: ada.id, name: 'First', yamlContent: 'id: first\n' });
      clock.now += 5;
      const second = await store.flows.create({ accountId: ada.id, name: 'Second', yamlContent: 'id: second\n' });

      expect(await store.flows.list(ada.id)).toEqual([
        { id: first.id, name: 'First', createdAt: first.createdAt, updatedAt: first.updatedAt },
        { id: second.id, name: 'Second', createdAt: second.createdAt, updatedAt: second.updatedAt },
      ]);
      expect(await store.flows.get(ada.id, first.id)).toEqual(first);

      clock.now += 5;
      const renamed = await store.flows.update(ada.id, first.id, { name: 'Renamed' });
      expect(renamed).toEqual({ ...first, name: 'Renamed', updatedAt: clock.now });
      const edited = await store.flows.update(ada.id, first.id, { yamlContent: '# comment kept\nid: first\n' });
      expect(edited).toMatchObject({ name: 'Renamed', yamlContent: '# comment kept\nid: first\n' });

      expect(await store.flows.delete(ada.id, first.id)).toBe(true);
      expect(await store.flows.delete(ada.id, first.id)).toBe(false);
      expect(await store.flows.get(ada.id, first.id)).toBeNull();
      expect(await store.flows.update(ada.id, first.id, { name: 'Gone' })).toBeNull();
      expect((await store.flows.list(ada.id)).map((flow) => flow.id)).toEqual([second.id]);
    });

    it('lists what was just written, every time: a read list never hides a create, rename or delete', async () => {
      const { store } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const first = await store.flows.create({ accountId: ada.id, name: 'First', yamlContent: 'id: a\n' });
      expect((await store.flows.list(ada.id)).map((f) => f.name)).toEqual(['First']);
      (await store.flows.list(ada.id))[0]!.name = 'changed by a caller'; // a caller's copy, not the store's
      expect((await store.flows.list(ada.id)).map((f) => f.name)).toEqual(['First']);
      await store.flows.create({ accountId: bo.id, name: 'Bo flow', yamlContent: 'id: b\n' });
      const second = await store.flows.create({ accountId: ada.id, name: 'Second', yamlContent: 'id: c\n' });
      expect((await store.flows.list(ada.id)).map((f) => f.name)).toEqual(['First', 'Second']);
      await store.flows.update(ada.id, first.id, { name: 'Renamed' });
      expect((await store.flows.list(ada.id)).map((f) => f.name)).toEqual(['Renamed', 'Second']);
      await store.flows.delete(ada.id, second.id);
      expect((await store.flows.list(ada.id)).map((f) => f.name)).toEqual(['Renamed']);
      expect((await store.flows.list(bo.id)).map((f) => f.name)).toEqual(['Bo flow']);
    });
  });

  describe('provider settings', () => {
    it('reads as all null before anything is saved, then keeps fields that a change leaves out', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);

      expect(await store.providers.get(ada.id)).toEqual({
        accountId: ada.id,
        sttProvider: null,
        sttKeyEnc: null,
        ttsProvider: null,
        ttsKeyEnc: null,
        llmProvider: null,
        llmKeyEnc: null,
        sttBaseUrl: null,
        sttModel: null,
        llmBaseUrl: null,
        llmModel: null,
        ttsBaseUrl: null,
        ttsModel: null,
        updatedAt: null,
      });
      await store.providers.update(ada.id, { sttProvider: 'deepgram', sttKeyEnc: 'enc-stt', llmProvider: 'openai', llmBaseUrl: 'http://models.example:8000/v1', llmModel: 'llama3.1' });
      clock.now += 1;
      const updated = await store.providers.update(ada.id, { sttKeyEnc: null, ttsProvider: 'flite' });

      expect(updated).toEqual({
        accountId: ada.id,
        sttProvider: 'deepgram',
        sttKeyEnc: null,
        ttsProvider: 'flite',
        ttsKeyEnc: null,
        llmProvider: 'openai',
        llmKeyEnc: null,
        sttBaseUrl: null,
        sttModel: null,
        llmBaseUrl: 'http://models.example:8000/v1',
        llmModel: 'llama3.1',
        ttsBaseUrl: null,
        ttsModel: null,
        updatedAt: clock.now,
      });
      expect(await store.providers.get(ada.id)).toEqual(updated);
    });
  });

  describe('sessions', () => {
    it('lists an account’s sessions newest first, at most the limit', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const ids: string[] = [];
      for (let i = 0; i < 55; i++) {
        clock.now += 1;
        ids.push((await store.sessions.create(sessionInput(ada.id, `token-${i}`, clock.now + 600))).id);
      }

      const recent = await store.sessions.listRecent(ada.id);
      expect(recent).toHaveLength(50);
      expect(recent.map((session) => session.id)).toEqual(ids.slice(5).reverse());
      expect((await store.sessions.listRecent(ada.id, 3)).map((session) => session.id)).toEqual(ids.slice(52).reverse());
    });

    it('keeps context and metadata as objects', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const created = await store.sessions.create({
        ...sessionInput(ada.id, 'token-1', clock.now + 600),
        context: { secret_thing: 'a teapot', round: 2 },
        metadata: { crm_id: 'c-9', tags: ['vip'] },
      });
      expect(await store.sessions.findById(created.id)).toMatchObject({
        status: 'created',
        context: { secret_thing: 'a teapot', round: 2 },
        metadata: { crm_id: 'c-9', tags: ['vip'] },
      });
    });

    it('creates engine-router sessions already connected, without a token', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const session = await store.sessions.createConnected({
        accountId: ada.id,
        flowId: null,
        transport: 'webrtc',
        mode: 'assistant',
        context: {},
        metadata: {},
      });
      expect(session).toMatchObject({ status: 'connected', startedAt: clock.now, tokenHash: null, tokenPrefix: null });
      expect(await store.sessions.listRecent(ada.id)).toEqual([session]);
    });
  });

  describe('account isolation', () => {
    it('never shows one account another account’s flows, keys or sessions', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const flow = await store.flows.create({ accountId: ada.id, name: 'Ada’s flow', yamlContent: 'id: a\n' });
      await store.apiKeys.create({ accountId: ada.id, label: 'ada', prefix: 'vfk_aaaaaaaa', keyHash: 'h-ada' });
      await store.sessions.create(sessionInput(ada.id, 'token-ada', clock.now + 600));

      expect(await store.flows.list(bo.id)).toEqual([]);
      expect(await store.flows.get(bo.id, flow.id)).toBeNull();
      expect(await store.flows.update(bo.id, flow.id, { name: 'Stolen' })).toBeNull();
      expect(await store.flows.delete(bo.id, flow.id)).toBe(false);
      expect(await store.flows.get(ada.id, flow.id)).toEqual(flow);
      expect(await store.apiKeys.listByAccount(bo.id)).toEqual([]);
      expect(await store.sessions.listRecent(bo.id)).toEqual([]);
      expect((await store.providers.get(bo.id)).updatedAt).toBeNull();
    });
  });
});
