// The flow-versions repository's promises (issue 17), below the API: publishing is one
// transaction (version, live text and pointer together), a draft's tag never repeats, a stale
// tag changes nothing, the history survives a reopen (journal replay), and goes with its flow
// (with the flow's tests and their runs).
import { describe, expect, it } from 'vitest';
import { openStore } from '../../server/store/store.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

async function storeWithFlow(dataDir?: string) {
  const dir = dataDir ?? (await tempDataDir());
  const clock = { now: 1_700_000_000 };
  const store = await openStore({ dataDir: dir, now: () => clock.now });
  const account = await store.accounts.create({ email: `v${Math.random()}@example.com`, passwordHash: 'h' });
  const flow = await store.flows.create({ accountId: account.id, name: 'F', yamlContent: 'id: f\nversion: "1"\n', version: { documentVersion: '1', createdBy: { kind: 'studio' } } });
  return { store, account, flow, clock, dir };
}

describe('flow versions in the store', () => {
  it('publishing writes the version, the live text and the pointer together, and updates the cached flow list', async () => {
    const { store, account, flow, clock } = await storeWithFlow();
    closeAfterTest(store);
    const listedBefore = store.flows.list(account.id)[0]!.updatedAt;
    clock.now += 60;
    const published = await store.flowVersions.publish(account.id, flow.id, { yamlContent: 'id: f\nversion: "2"\n', documentVersion: '2', note: 'two', createdBy: null });
    expect(published).toMatchObject({ ok: true, version: { number: 2, note: 'two', createdAt: clock.now } });
    expect(store.flows.get(account.id, flow.id)).toMatchObject({ yamlContent: 'id: f\nversion: "2"\n', publishedVersion: 2, updatedAt: clock.now });
    expect(store.flows.list(account.id)[0]!.updatedAt).toBe(listedBefore + 60);
    expect(store.flowVersions.list(account.id, flow.id)!.map((v) => v.number)).toEqual([2, 1]);
  });

  it("a draft's tag is new on every write, even after a discard, so a stale tag never matches again", async () => {
    const { store, account, flow } = await storeWithFlow();
    closeAfterTest(store);
    expect(store.flowVersions.currentEtag(account.id, flow.id)).toBe('v1');
    const first = await store.flowVersions.saveDraft(account.id, flow.id, 'one', 'v1');
    if (!first.ok) throw new Error('the first save should pass');
    await store.flowVersions.discardDraft(account.id, flow.id);
    const again = await store.flowVersions.saveDraft(account.id, flow.id, 'two');
    if (!again.ok) throw new Error('a save without If-Match should pass');
    expect(again.draft.etag).not.toBe(first.draft.etag);
    // The old tag is refused and nothing is written.
    expect(await store.flowVersions.saveDraft(account.id, flow.id, 'three', first.draft.etag)).toEqual({ ok: false, reason: 'conflict', currentEtag: again.draft.etag });
    expect(store.flowVersions.getDraft(account.id, flow.id)!.yamlContent).toBe('two');
    // Publishing from a draft other than the one validated is refused the same way.
    const refused = await store.flowVersions.publish(account.id, flow.id, { yamlContent: 'two', documentVersion: null, createdBy: null }, { fromDraft: true, expectEtag: first.draft.etag });
    expect(refused).toMatchObject({ ok: false, reason: 'conflict' });
    expect(store.flows.get(account.id, flow.id)).toMatchObject({ publishedVersion: 1, hasDraft: true });
  });

  it('keeps every version and the draft across a reopen, and deleting the flow takes its history with it', async () => {
    const { store, account, flow, dir } = await storeWithFlow();
    await store.flowVersions.saveDraft(account.id, flow.id, 'draft text');
    await store.flows.update(account.id, flow.id, { yamlContent: 'id: f\nversion: "2"\n', version: { documentVersion: '2', createdBy: { kind: 'api_key', apiKeyId: 'k1' } } });
    await store.close();

    const reopened = closeAfterTest(await openStore({ dataDir: dir }));
    expect(reopened.flowVersions.list(account.id, flow.id)).toEqual([
      expect.objectContaining({ number: 2, documentVersion: '2', createdBy: { kind: 'api_key', apiKeyId: 'k1' } }),
      expect.objectContaining({ number: 1, documentVersion: '1', createdBy: { kind: 'studio' } }),
    ]);
    expect(reopened.flowVersions.getDraft(account.id, flow.id)).toMatchObject({ yamlContent: 'draft text', baseVersion: 1 });
    // Another account sees none of it.
    const other = await reopened.accounts.create({ email: 'other@example.com', passwordHash: 'h' });
    expect(reopened.flowVersions.list(other.id, flow.id)).toBeNull();
    expect(reopened.flowVersions.get(other.id, flow.id, 1)).toBeNull();
    expect(await reopened.flowVersions.saveDraft(other.id, flow.id, 'stolen')).toEqual({ ok: false, reason: 'not_found' });

    // Its tests and their runs too (issue 18): nothing of a deleted flow stays behind in the store.
    await reopened.flowTests.create(account.id, flow.id, [{ name: 'one', yamlContent: 'name: one\nsteps: []\n' }]);
    await reopened.flowTests.startRun({ accountId: account.id, flowId: flow.id, mode: 'scripted', draft: false, flowVersion: 2, testIds: [] });

    expect(await reopened.flows.delete(account.id, flow.id)).toBe(true);
    for (const table of ['flow_versions', 'flow_drafts', 'flow_tests', 'flow_test_runs']) {
      expect(reopened.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE flow_id = ?`, [flow.id])!.n, table).toBe(0);
    }
  });
});
