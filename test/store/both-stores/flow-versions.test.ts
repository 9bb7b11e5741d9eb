// The flow-versions repository's promises (docs/flows.md#drafts), below the API, against both
// stores (both-stores.ts): publishing is one transaction (version, live text and pointer
// together), a draft's tag never repeats, a stale tag changes nothing, and the history goes with
// its flow (with the flow's tests and their runs). Surviving a reopen is the sql.js journal's
// promise and stays sql.js-only below; two nodes publishing at once is
// postgres-two-nodes-publish.test.ts.
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../server/store/sqljs/store.ts';
import type { Store } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';
import { closeAfterTest, tempDataDir } from '../helpers.ts';

async function addFlow(store: Store) {
  const account = await store.accounts.create({ email: `v${Math.random()}@example.com`, passwordHash: 'h' });
  const flow = await store.flows.create({ accountId: account.id, name: 'F', yamlContent: 'id: f\nversion: "1"\n', version: { documentVersion: '1', createdBy: { kind: 'studio' } } });
  return { account, flow };
}

describeEachStore('flow versions in the store', (open) => {
  async function storeWithFlow() {
    const clock = { now: 1_700_000_000 };
    const probe = await open({ now: () => clock.now });
    return { ...probe, ...(await addFlow(probe.store)), clock };
  }

  it('publishing writes the version, the live text and the pointer together, and updates the flow list', async () => {
    const { store, account, flow, clock } = await storeWithFlow();
    const listedBefore = (await store.flows.list(account.id))[0]!.updatedAt;
    clock.now += 60;
    const published = await store.flowVersions.publish(account.id, flow.id, { yamlContent: 'id: f\nversion: "2"\n', documentVersion: '2', note: 'two', createdBy: null });
    expect(published).toMatchObject({ ok: true, version: { number: 2, note: 'two', createdAt: clock.now } });
    expect(await store.flows.get(account.id, flow.id)).toMatchObject({ yamlContent: 'id: f\nversion: "2"\n', publishedVersion: 2, updatedAt: clock.now });
    expect((await store.flows.list(account.id))[0]!.updatedAt).toBe(listedBefore + 60);
    expect((await store.flowVersions.list(account.id, flow.id))!.map((v) => v.number)).toEqual([2, 1]);
  });

  it("a draft's tag is new on every write, even after a discard, so a stale tag never matches again", async () => {
    const { store, account, flow } = await storeWithFlow();
    expect(await store.flowVersions.currentEtag(account.id, flow.id)).toBe('v1');
    const first = await store.flowVersions.saveDraft(account.id, flow.id, 'one', 'v1');
    if (!first.ok) throw new Error('the first save should pass');
    expect(await store.flowVersions.currentEtag(account.id, flow.id)).toBe(first.draft.etag);
    await store.flowVersions.discardDraft(account.id, flow.id);
    const again = await store.flowVersions.saveDraft(account.id, flow.id, 'two');
    if (!again.ok) throw new Error('a save without If-Match should pass');
    expect(again.draft.etag).not.toBe(first.draft.etag);
    // The old tag is refused and nothing is written.
    expect(await store.flowVersions.saveDraft(account.id, flow.id, 'three', first.draft.etag)).toEqual({ ok: false, reason: 'conflict', currentEtag: again.draft.etag });
    expect((await store.flowVersions.getDraft(account.id, flow.id))!.yamlContent).toBe('two');
    // Publishing from a draft other than the one validated is refused the same way.
    const refused = await store.flowVersions.publish(account.id, flow.id, { yamlContent: 'two', documentVersion: null, createdBy: null }, { fromDraft: true, expectEtag: first.draft.etag });
    expect(refused).toMatchObject({ ok: false, reason: 'conflict' });
    expect(await store.flows.get(account.id, flow.id)).toMatchObject({ publishedVersion: 1, hasDraft: true });
    // The validated draft is published and gone; publishing from a draft again has none.
    const made = await store.flowVersions.publish(account.id, flow.id, { yamlContent: 'two', documentVersion: null, createdBy: null }, { fromDraft: true, expectEtag: again.draft.etag });
    expect(made).toMatchObject({ ok: true, version: { number: 2, yamlContent: 'two' } });
    expect(await store.flows.get(account.id, flow.id)).toMatchObject({ publishedVersion: 2, yamlContent: 'two', hasDraft: false });
    expect(await store.flowVersions.publish(account.id, flow.id, { yamlContent: 'two', documentVersion: null, createdBy: null }, { fromDraft: true })).toEqual({ ok: false, reason: 'no_draft' });
  });

  it("keeps every version and the draft, shows another account none of it, and deleting the flow takes its history with it", async () => {
    const { store, account, flow, rows } = await storeWithFlow();
    await store.flowVersions.saveDraft(account.id, flow.id, 'draft text');
    await store.flows.update(account.id, flow.id, { yamlContent: 'id: f\nversion: "2"\n', version: { documentVersion: '2', createdBy: { kind: 'api_key', apiKeyId: 'k1' } } });
    expect(await store.flowVersions.list(account.id, flow.id)).toEqual([
      expect.objectContaining({ number: 2, documentVersion: '2', createdBy: { kind: 'api_key', apiKeyId: 'k1' } }),
      expect.objectContaining({ number: 1, documentVersion: '1', createdBy: { kind: 'studio' } }),
    ]);
    expect(await store.flowVersions.get(account.id, flow.id, 1)).toMatchObject({ number: 1, yamlContent: 'id: f\nversion: "1"\n' });
    expect(await store.flowVersions.get(account.id, flow.id, 3)).toBeNull();
    expect(await store.flowVersions.getDraft(account.id, flow.id)).toMatchObject({ yamlContent: 'draft text', baseVersion: 1 });
    // Another account sees none of it.
    const other = await store.accounts.create({ email: 'other@example.com', passwordHash: 'h' });
    expect(await store.flowVersions.list(other.id, flow.id)).toBeNull();
    expect(await store.flowVersions.get(other.id, flow.id, 1)).toBeNull();
    expect(await store.flowVersions.getDraft(other.id, flow.id)).toBeNull();
    expect(await store.flowVersions.currentEtag(other.id, flow.id)).toBeNull();
    expect(await store.flowVersions.saveDraft(other.id, flow.id, 'stolen')).toEqual({ ok: false, reason: 'not_found' });
    expect(await store.flowVersions.publish(other.id, flow.id, { yamlContent: 'stolen', documentVersion: null, createdBy: null })).toEqual({ ok: false, reason: 'not_found' });

    // Its tests and their runs too: nothing of a deleted flow stays behind in the store.
    await store.flowTests.create(account.id, flow.id, [{ name: 'one', yamlContent: 'name: one\nsteps: []\n' }]);
    await store.flowTests.startRun({ accountId: account.id, flowId: flow.id, mode: 'scripted', draft: false, flowVersion: 2, testIds: [] });

    expect(await store.flows.delete(account.id, flow.id)).toBe(true);
    for (const table of ['flow_versions', 'flow_drafts', 'flow_tests', 'flow_test_runs']) {
      expect((await rows<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE flow_id = ?`, [flow.id]))[0]!.n, table).toBe(0);
    }
  });
});

describe('flow versions in the embedded store', () => {
  it('keeps every version and the draft across a reopen (the journal replays them)', async () => {
    const dir = await tempDataDir();
    const store = await openStore({ dataDir: dir });
    const { account, flow } = await addFlow(store);
    await store.flowVersions.saveDraft(account.id, flow.id, 'draft text');
    await store.flows.update(account.id, flow.id, { yamlContent: 'id: f\nversion: "2"\n', version: { documentVersion: '2', createdBy: { kind: 'api_key', apiKeyId: 'k1' } } });
    await store.close();

    const reopened = closeAfterTest(await openStore({ dataDir: dir }));
    expect(await reopened.flowVersions.list(account.id, flow.id)).toEqual([
      expect.objectContaining({ number: 2, documentVersion: '2', createdBy: { kind: 'api_key', apiKeyId: 'k1' } }),
      expect.objectContaining({ number: 1, documentVersion: '1', createdBy: { kind: 'studio' } }),
    ]);
    expect(await reopened.flowVersions.getDraft(account.id, flow.id)).toMatchObject({ yamlContent: 'draft text', baseVersion: 1 });
    expect(await reopened.flows.get(account.id, flow.id)).toMatchObject({ publishedVersion: 2, yamlContent: 'id: f\nversion: "2"\n', hasDraft: true });
  });
});
