// Two nodes on one PostgreSQL (docs/hosting.md#several-nodes-on-postgresql), below the API: what
// one node writes to a flow the other reads at once (no node keeps a stale list), two nodes
// publishing one flow at the same moment get distinct version numbers with the live text of the
// last, and of two draft saves made with the same If-Match tag exactly one wins.
import { describe, expect, it } from 'vitest';
import { postgresNodesForThisFile } from './postgres-nodes.ts';

const nodes = postgresNodesForThisFile();


describe('two nodes sharing one flow', () => {
  it("lists, reads and renames what the other node just wrote, every time", async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    expect(await b.flows.list(account.id)).toEqual([]);
    const flow = await a.flows.create({ accountId: account.id, name: 'Support', yamlContent: 'id: support\n' });
    expect((await b.flows.list(account.id)).map((f) => f.name)).toEqual(['Support']);
    await b.flows.update(account.id, flow.id, { name: 'Support line' });
    expect((await a.flows.list(account.id)).map((f) => f.name)).toEqual(['Support line']);
    expect(await a.flows.get(account.id, flow.id)).toMatchObject({ name: 'Support line', yamlContent: 'id: support\n' });
    await a.flows.delete(account.id, flow.id);
    expect(await b.flows.list(account.id)).toEqual([]);
    expect(await b.flows.get(account.id, flow.id)).toBeNull();
  });

  it('gives 20 publishes made at once on two nodes the numbers 2 to 21, once each, and keeps the last one live', async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const flow = await a.flows.create({ accountId: account.id, name: 'F', yamlContent: 'id: f\n' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).flowVersions.publish(account.id, flow.id, { yamlContent: `id: f\n# edit ${i}\n`, documentVersion: null, note: `edit ${i}`, createdBy: null }),
      ),
    );
    const numbers = results.map((result) => (result.ok ? result.version.number : 0));
    expect([...numbers].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    // The live text is the text of the highest number, on both nodes.
    const last = results.find((result) => result.ok && result.version.number === 21);
    const lastText = last?.ok ? last.version.yamlContent : '';
    for (const node of [a, b]) {
      expect(await node.flows.get(account.id, flow.id)).toMatchObject({ publishedVersion: 21, yamlContent: lastText });
      expect((await node.flowVersions.list(account.id, flow.id))!.map((v) => v.number)).toEqual(Array.from({ length: 21 }, (_, i) => 21 - i));
    }
  });

  it('lets exactly one of two draft saves made with the same tag on two nodes win, round after round', async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const flow = await a.flows.create({ accountId: account.id, name: 'F', yamlContent: 'id: f\n' });
    let tag = (await a.flowVersions.currentEtag(account.id, flow.id))!;
    expect(tag).toBe('v1');
    for (let round = 0; round < 10; round++) {
      const [fromA, fromB] = await Promise.all([
        a.flowVersions.saveDraft(account.id, flow.id, `from A, round ${round}`, tag),
        b.flowVersions.saveDraft(account.id, flow.id, `from B, round ${round}`, tag),
      ]);
      const winners = [fromA, fromB].filter((result) => result.ok);
      expect(winners, `round ${round}`).toHaveLength(1);
      const winner = winners[0]!;
      if (!winner.ok) throw new Error('unreachable');
      // The loser is told the winner's tag, and the draft is the winner's text.
      expect([fromA, fromB].find((result) => !result.ok)).toEqual({ ok: false, reason: 'conflict', currentEtag: winner.draft.etag });
      expect(await b.flowVersions.getDraft(account.id, flow.id)).toMatchObject({ yamlContent: winner.draft.yamlContent, etag: winner.draft.etag });
      tag = winner.draft.etag;
    }
    // Publishing the draft from one node while the other discards it: one of the two wins.
    const [published, discarded] = await Promise.all([
      a.flowVersions.publish(account.id, flow.id, { yamlContent: 'validated draft', documentVersion: null, createdBy: null }, { fromDraft: true, expectEtag: tag }),
      b.flowVersions.discardDraft(account.id, flow.id, tag),
    ]);
    expect([published.ok, discarded.ok].filter(Boolean)).toHaveLength(1);
    expect((await a.flows.get(account.id, flow.id))!.hasDraft).toBe(false);
  });
});
