// The server's side of the store worker keeps the reads nearly every request makes (the API
// key, the flow list, the flows, and what a session start reads: worker-store-cache.ts); what it
// keeps must never outlive a write.
import { describe, expect, it } from 'vitest';
import { openWorkerStore } from '../../server/store/sqljs/worker-store.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

const HASH = 'a'.repeat(64);

async function setUp() {
  const store = closeAfterTest(await openWorkerStore({ dataDir: await tempDataDir() }));
  const account = await store.accounts.create({ email: 'hot@example.com', passwordHash: 'scrypt$x', signupCreditCents: 0 });
  return { store, account };
}

describe('reads kept beside the store worker', () => {
  it('a revoked key is refused at once, even when a read sent before the revoke answers after it', async () => {
    const { store, account } = await setUp();
    const key = await store.apiKeys.create({ accountId: account.id, label: 'ci', prefix: 'vf_hot', keyHash: HASH });

    // Sent in this order, nothing kept yet: the read still sees the key; its answer must not be
    // kept past the revoke.
    const before = store.apiKeys.findActiveByHash('b'.repeat(64));
    const readBeforeRevoke = store.apiKeys.findActiveByHash(HASH);
    const revoked = store.apiKeys.revoke(account.id, key.id);
    expect((await readBeforeRevoke)?.id).toBe(key.id);
    expect(await revoked).toBe(true);
    expect(await before).toBeNull();
    expect(await store.apiKeys.findActiveByHash(HASH)).toBeNull();

    // A kept key goes with a revoke too.
    const second = await store.apiKeys.create({ accountId: account.id, label: 'ci2', prefix: 'vf_ho2', keyHash: 'c'.repeat(64) });
    expect((await store.apiKeys.findActiveByHash('c'.repeat(64)))?.id).toBe(second.id);
    expect((await store.apiKeys.findActiveByHash('c'.repeat(64)))?.id).toBe(second.id);
    await store.apiKeys.revoke(account.id, second.id);
    expect(await store.apiKeys.findActiveByHash('c'.repeat(64))).toBeNull();
  });

  it('a flow read follows every write: create, edit, draft, publish, delete, even a write sent after the read', async () => {
    const { store, account } = await setUp();
    const text = (n: number) => `id: kept\nversion: "${n}"\n${'# a long comment, é\n'.repeat(200)}`;
    const flow = await store.flows.create({ accountId: account.id, name: 'Kept', yamlContent: text(1) });
    expect(await store.flows.get(account.id, flow.id)).toMatchObject({ yamlContent: text(1), publishedVersion: 1, hasDraft: false });

    // Sent in this order: the read answers with the text before the edit, and must not be kept past it.
    const readBeforeEdit = store.flows.get(account.id, flow.id);
    const edited = store.flows.update(account.id, flow.id, { yamlContent: text(2) });
    expect((await readBeforeEdit)?.yamlContent).toBe(text(1));
    expect((await edited)?.yamlContent).toBe(text(2));
    expect(await store.flows.get(account.id, flow.id)).toMatchObject({ yamlContent: text(2), publishedVersion: 2 });

    await store.flowVersions.saveDraft(account.id, flow.id, text(3));
    expect(await store.flows.get(account.id, flow.id)).toMatchObject({ yamlContent: text(2), hasDraft: true });
    await store.flowVersions.publish(account.id, flow.id, { yamlContent: text(3), documentVersion: '3', createdBy: null }, { fromDraft: true, expectEtag: (await store.flowVersions.currentEtag(account.id, flow.id))! });
    expect(await store.flows.get(account.id, flow.id)).toMatchObject({ yamlContent: text(3), publishedVersion: 3, hasDraft: false });
    // A write that does not carry the text (a rename) answers with the text as it is.
    expect(await store.flows.update(account.id, flow.id, { name: 'Renamed' })).toMatchObject({ name: 'Renamed', yamlContent: text(3) });
    expect(await store.flows.update(account.id, flow.id, { name: 'Kept' })).toMatchObject({ name: 'Kept', yamlContent: text(3), publishedVersion: 3 });
    await store.flowVersions.publish(account.id, flow.id, { yamlContent: text(4), documentVersion: '4', createdBy: null });
    expect(await store.flows.update(account.id, flow.id, { layout: '{}' })).toMatchObject({ yamlContent: text(4), layout: '{}', publishedVersion: 4 });

    // A caller changing what it was given does not change what the next caller gets.
    (await store.flows.get(account.id, flow.id))!.name = 'changed by a caller';
    expect((await store.flows.get(account.id, flow.id))!.name).toBe('Kept');
    // Another account never reads it, kept or not.
    const other = await store.accounts.create({ email: 'other@example.com', passwordHash: 'scrypt$x', signupCreditCents: 0 });
    expect(await store.flows.get(other.id, flow.id)).toBeNull();

    await store.flows.delete(account.id, flow.id);
    expect(await store.flows.get(account.id, flow.id)).toBeNull();
  });

  it('the flow list follows every write: create, rename, publish, delete', async () => {
    const { store, account } = await setUp();
    expect(await store.flows.list(account.id)).toEqual([]);
    const a = await store.flows.create({ accountId: account.id, name: 'A', yamlContent: 'id: a\n' });
    expect((await store.flows.list(account.id)).map((f) => f.name)).toEqual(['A']);
    const b = await store.flows.create({ accountId: account.id, name: 'B', yamlContent: 'id: b\n' });
    await store.flows.update(account.id, a.id, { name: 'A2' });
    expect((await store.flows.list(account.id)).map((f) => f.name)).toEqual(['A2', 'B']);
    const listed = await store.flows.list(account.id);
    await store.flowVersions.saveDraft(account.id, b.id, 'id: b\nversion: 2\n');
    await store.flowVersions.publish(account.id, b.id, { yamlContent: 'id: b\nversion: 2\n', documentVersion: '2', createdBy: null }, { fromDraft: true, expectEtag: (await store.flowVersions.currentEtag(account.id, b.id))! });
    const afterPublish = await store.flows.list(account.id);
    expect(afterPublish.find((f) => f.id === b.id)!.updatedAt).toBeGreaterThanOrEqual(listed.find((f) => f.id === b.id)!.updatedAt);
    await store.flows.delete(account.id, a.id);
    expect((await store.flows.list(account.id)).map((f) => f.name)).toEqual(['B']);
    // A caller changing what it was given does not change what the next caller gets.
    (await store.flows.list(account.id))[0]!.name = 'changed by a caller';
    expect((await store.flows.list(account.id))[0]!.name).toBe('B');
  });

  it("a session start's reads follow every write: the flow's existence, the provider settings, the running experiment", async () => {
    const { store, account } = await setUp();
    const flow = await store.flows.create({ accountId: account.id, name: 'Tested', yamlContent: 'id: tested\n' });
    expect(await store.flows.exists(account.id, flow.id)).toBe(true);
    expect(await store.flows.exists(account.id, flow.id)).toBe(true);
    expect(await store.flows.exists(account.id, 'no-such-flow')).toBe(false);
    const other = await store.accounts.create({ email: 'other@example.com', passwordHash: 'scrypt$x', signupCreditCents: 0 });
    expect(await store.flows.exists(other.id, flow.id)).toBe(false);

    expect((await store.providers.get(account.id)).llmModel).toBeNull();
    // Sent in this order: the read answers with the settings before the save, and must not be kept past it.
    const readBeforeSave = store.providers.get(account.id);
    const saved = store.providers.update(account.id, { llmModel: 'model-a' });
    expect((await readBeforeSave).llmModel).toBeNull();
    expect((await saved).llmModel).toBe('model-a');
    expect((await store.providers.get(account.id)).llmModel).toBe('model-a');
    await store.providers.update(account.id, { llmModel: 'model-b' });
    const settings = await store.providers.get(account.id);
    expect(settings.llmModel).toBe('model-b');
    // A caller changing what it was given does not change what the next caller gets.
    settings.llmModel = 'changed by a caller';
    expect((await store.providers.get(account.id)).llmModel).toBe('model-b');

    expect(await store.experiments.running(account.id, flow.id)).toBeNull();
    const started = await store.experiments.create({ accountId: account.id, flowId: flow.id, name: 'A/B', arms: [{ version: 1, weight: 1 }] });
    if (started === 'running') throw new Error('no experiment was running');
    const running = await store.experiments.running(account.id, flow.id);
    expect(running?.id).toBe(started.id);
    running!.arms[0]!.weight = 99;
    expect((await store.experiments.running(account.id, flow.id))?.arms).toEqual([{ version: 1, weight: 1 }]);
    await store.experiments.stop(account.id, flow.id, started.id, null);
    expect(await store.experiments.running(account.id, flow.id)).toBeNull();

    // Deleting the flow takes its experiments with it.
    const again = await store.experiments.create({ accountId: account.id, flowId: flow.id, name: 'A/B 2', arms: [{ version: 1, weight: 1 }] });
    expect((await store.experiments.running(account.id, flow.id))?.id).toBe(again === 'running' ? undefined : again.id);
    await store.flows.delete(account.id, flow.id);
    expect(await store.flows.exists(account.id, flow.id)).toBe(false);
    expect(await store.experiments.running(account.id, flow.id)).toBeNull();
  });

  it('a balance follows every grant and debit, even one sent after the read, and one account\'s debit leaves the others\' as they are', async () => {
    const { store, account } = await setUp();
    const other = await store.accounts.create({ email: 'other@example.com', passwordHash: 'scrypt$x', signupCreditCents: 50 });
    expect(await store.credits.balance(account.id)).toBe(0);
    expect(await store.credits.balance(other.id)).toBe(50);

    // Sent in this order: the read answers with the balance before the grant, and must not be kept past it.
    const readBeforeGrant = store.credits.balance(account.id);
    const granted = store.credits.grant(account.id, 300, 'top-up', 'grant-1');
    expect(await readBeforeGrant).toBe(0);
    expect((await granted).balance).toBe(300);
    expect(await store.credits.balance(account.id)).toBe(300);

    // A read sent after a debit, before its answer, sees it, as a read sent after a write always has.
    const debiting = store.credits.debit(account.id, 3, { idempotencyKey: 'minute-1' });
    const readAfterDebit = store.credits.balance(account.id);
    expect(await readAfterDebit).toBe(297);
    expect(await debiting).toEqual({ ok: true, balance: 297, duplicate: false });
    expect(await store.credits.balance(account.id)).toBe(297);
    // A repeated debit charges nothing; a refused one writes nothing.
    expect((await store.credits.debit(account.id, 3, { idempotencyKey: 'minute-1' })).balance).toBe(297);
    expect(await store.credits.debit(account.id, 1000, { idempotencyKey: 'too-much' })).toEqual({ ok: false, balance: 297 });
    expect(await store.credits.balance(account.id)).toBe(297);

    // Two writes sent before either answers: the balance read after them is the last one's.
    const first = store.credits.debit(account.id, 7, { idempotencyKey: 'minute-2' });
    const second = store.credits.debit(other.id, 5, { idempotencyKey: 'other-minute-1' });
    const third = store.credits.debit(account.id, 10, { idempotencyKey: 'minute-3' });
    await Promise.all([first, second, third]);
    expect(await store.credits.balance(account.id)).toBe(280);
    expect(await store.credits.balance(other.id)).toBe(45);
    // What the worker's own SQL says agrees with what is kept here.
    const [row] = await store.rows<{ balance: number }>('SELECT SUM(delta_cents) AS balance FROM credit_ledger WHERE account_id = ?', [account.id]);
    expect(row!.balance).toBe(280);
  });
});
