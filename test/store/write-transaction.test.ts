import { describe, expect, it } from 'vitest';
import { StoreClosedError } from '../../server/store/errors.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, copyAsIfCrashed, tempDataDir } from './helpers.ts';

async function openWithAccount() {
  const dataDir = await tempDataDir();
  const store = closeAfterTest(await openStore({ dataDir }));
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
  return { store, dataDir, accountId: account.id };
}

const INSERT_FLOW = 'INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)';

describe('db.write', () => {
  it('refuses statements that would replay differently, such as CURRENT_TIMESTAMP', async () => {
    const { store, accountId } = await openWithAccount();
    const write = store.db.write((tx) =>
      tx.run(`INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at)
              VALUES ('f', ?, 'n', 'y', CURRENT_TIMESTAMP, 0)`, [accountId]),
    );
    await expect(write).rejects.toThrow(/deterministic/);
    expect(await store.flows.list(accountId)).toEqual([]);
  });

  it('refuses parameters that JSON cannot carry back unchanged', async () => {
    const { store, accountId } = await openWithAccount();
    await expect(store.db.write((tx) => tx.run(INSERT_FLOW, ['f', accountId, 'n', 'y', Number.NaN, 0]))).rejects.toThrow(TypeError);
    expect(await store.flows.list(accountId)).toEqual([]);
  });

  it('rolls back and rejects an async callback', async () => {
    const { store, accountId } = await openWithAccount();
    const write = store.db.write(async (tx) => {
      tx.run(INSERT_FLOW, ['f', accountId, 'n', 'y', 1, 1]);
    });
    await expect(write).rejects.toThrow(/synchronous/);
    expect(await store.flows.list(accountId)).toEqual([]);
  });

  it('rejects a write started inside another write without undoing the outer one', async () => {
    const { store, accountId } = await openWithAccount();
    let innerError: Promise<unknown> | undefined;
    await store.db.write((tx) => {
      tx.run(INSERT_FLOW, ['outer', accountId, 'n', 'y', 1, 1]);
      innerError = store.db
        .write((innerTx) => innerTx.run(INSERT_FLOW, ['inner', accountId, 'n', 'y', 1, 1]))
        .catch((error: unknown) => error);
    });
    expect(await innerError).toMatchObject({ message: expect.stringMatching(/inside another write/) });
    expect((await store.flows.list(accountId)).map((flow) => flow.id)).toEqual(['outer']);
  });

  it('resolves a write that changed nothing only after the earlier writes are durable', async () => {
    const { store, accountId, dataDir } = await openWithAccount();
    const order: string[] = [];
    const changing = store.flows.create({ accountId, name: 'A', yamlContent: 'y' }).then(() => order.push('create'));
    // Sees the uncommitted-to-disk flow, so its answer depends on that write reaching the disk.
    const readOnly = store.db
      .write((tx) => tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM flows')!.n)
      .then((count) => order.push(`count=${count}`));
    await Promise.all([changing, readOnly]);
    expect(order).toEqual(['create', 'count=1']);

    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    expect(await afterCrash.flows.list(accountId)).toHaveLength(1);
  });

  it('groups writes that arrive during an fsync into one journal append', async () => {
    const { store, accountId, dataDir } = await openWithAccount();
    const before = store.db.stats().journalBatches;
    await Promise.all(Array.from({ length: 100 }, (_, i) => store.flows.create({ accountId, name: `F${i}`, yamlContent: 'y' })));

    // All 100 commit before the first append starts; one append (two at most) carries them.
    expect(store.db.stats().journalBatches - before).toBeLessThanOrEqual(2);
    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    expect(await afterCrash.flows.list(accountId)).toHaveLength(100);
  });

  it('journals nothing for an update that matched no row', async () => {
    const { store } = await openWithAccount();
    const before = store.db.stats().lastSeq;
    expect(await store.db.write((tx) => tx.run("UPDATE flows SET name = 'x' WHERE id = 'none'"))).toBe(0);
    expect(store.db.stats().lastSeq).toBe(before);
  });

  it('rejects writes after close with StoreClosedError', async () => {
    const { store, accountId } = await openWithAccount();
    await store.close();
    await expect(store.flows.create({ accountId, name: 'late', yamlContent: 'y' })).rejects.toBeInstanceOf(StoreClosedError);
    await expect(store.flows.list(accountId)).rejects.toBeInstanceOf(StoreClosedError);
  });

  it('finishes writes already committed when close is called', async () => {
    const { store, accountId, dataDir } = await openWithAccount();
    const pending = Array.from({ length: 20 }, (_, i) => store.flows.create({ accountId, name: `F${i}`, yamlContent: 'y' }));
    const closing = store.close();
    await Promise.all(pending);
    await closing;

    const reopened = closeAfterTest(await openStore({ dataDir }));
    expect(await reopened.flows.list(accountId)).toHaveLength(20);
  });
});
