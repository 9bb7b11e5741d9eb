import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOURNAL_FILE, SNAPSHOT_FILE } from '../../server/store/sqljs/database.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, copyAsIfCrashed, integrityOfFile, tempDataDir } from './helpers.ts';

describe('snapshot rotation', () => {
  it('snapshots and empties the journal every N records, and a reopen finds every write', async () => {
    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir, snapshotEveryRecords: 10 }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) {
      ids.push((await store.flows.create({ accountId: account.id, name: `Flow ${i}`, yamlContent: 'id: f\n' })).id);
    }

    const stats = store.db.stats();
    // One per ten journal records; fewer when a write committed just before an export rode
    // along in the snapshot instead of the journal. The last rotation may still be running.
    expect(stats.snapshotsWritten).toBeGreaterThanOrEqual(8);
    expect(stats.journalRecords).toBeLessThanOrEqual(10);
    expect(await integrityOfFile(await readFile(join(dataDir, SNAPSHOT_FILE)))).toEqual(['ok']);

    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    expect((await afterCrash.flows.list(account.id)).map((flow) => flow.id)).toEqual(ids);
    expect(afterCrash.db.recovery.snapshotSeq).toBeGreaterThanOrEqual(90);
    expect(afterCrash.db.recovery.replayedRecords).toBeLessThanOrEqual(10);
  });

  it('also rotates on journal size', async () => {
    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir, snapshotEveryBytes: 16 * 1024 }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    for (let i = 0; i < 20; i++) {
      await store.flows.create({ accountId: account.id, name: `Big ${i}`, yamlContent: 'x'.repeat(4000) });
    }
    expect(store.db.stats().snapshotsWritten).toBeGreaterThanOrEqual(1 + 4);
    expect(store.db.stats().journalBytes).toBeLessThan(2 * 16 * 1024);
  });

  it('acknowledges every one of a burst of concurrent writes that straddles snapshots, and loses none', async () => {
    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir, snapshotEveryRecords: 10 }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const ids: string[] = [];
    // Waves, so that writes arrive while a snapshot is being written.
    for (let wave = 0; wave < 6; wave++) {
      const flows = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.flows.create({ accountId: account.id, name: `W${wave}-${i}`, yamlContent: 'id: f\n' })),
      );
      ids.push(...flows.map((flow) => flow.id));
    }

    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    expect(new Set((await afterCrash.flows.list(account.id)).map((flow) => flow.id))).toEqual(new Set(ids));
    expect(afterCrash.db.all('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  });

  it('writes a final snapshot on close that passes integrity_check and leaves the journal empty', async () => {
    const dataDir = await tempDataDir();
    const store = await openStore({ dataDir });
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h', signupCreditCents: 200 });
    await store.credits.debit(account.id, 3, { idempotencyKey: 'm1' });
    await store.close();
    await store.close(); // idempotent

    expect((await stat(join(dataDir, JOURNAL_FILE))).size).toBe(0);
    expect(await integrityOfFile(await readFile(join(dataDir, SNAPSHOT_FILE)))).toEqual(['ok']);
    const reopened = closeAfterTest(await openStore({ dataDir }));
    expect(await reopened.credits.balance(account.id)).toBe(197);
  });
});
