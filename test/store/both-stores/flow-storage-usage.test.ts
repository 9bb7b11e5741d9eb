// What an account's flows take up (the storage quota, docs/benchmarks.md#what-the-figures-rest-on),
// against both stores (both-stores.ts): the number of flows and the UTF-8 bytes of every
// version and draft, not counting the live copy twice, per account.
import { expect, it } from 'vitest';
import { describeEachStore } from './both-stores.ts';

describeEachStore('flow storage use', (open) => {
  it('counts flows and the bytes of every version and draft, in UTF-8, for that account only', async () => {
    const { store } = await open();
    const ada = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const bo = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h' });
    expect(await store.flowStorage.usage(ada.id)).toEqual({ flows: 0, bytes: 0 });

    const first = 'id: café\n'; // é is two bytes
    const flow = await store.flows.create({ accountId: ada.id, name: 'F', yamlContent: first });
    expect(await store.flowStorage.usage(ada.id)).toEqual({ flows: 1, bytes: Buffer.byteLength(first) });

    const second = 'id: café\nsay: "¡hola! 👋"\n';
    await store.flows.update(ada.id, flow.id, { yamlContent: second });
    const draft = 'a draft ✓\n';
    await store.flowVersions.saveDraft(ada.id, flow.id, draft);
    await store.flows.create({ accountId: bo.id, name: 'B', yamlContent: 'id: bo\n'.repeat(100) });
    expect(await store.flowStorage.usage(ada.id)).toEqual({ flows: 1, bytes: Buffer.byteLength(first) + Buffer.byteLength(second) + Buffer.byteLength(draft) });
    expect(await store.flowStorage.usage(bo.id)).toEqual({ flows: 1, bytes: 700 });

    await store.flows.delete(ada.id, flow.id);
    expect(await store.flowStorage.usage(ada.id)).toEqual({ flows: 0, bytes: 0 });
  });
});
