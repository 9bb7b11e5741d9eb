import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_FILE } from '../../server/store/sqljs/database.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, copyAsIfCrashed, tempDataDir } from './helpers.ts';

// With the default thresholds a snapshot waits until the journal holds as many bytes as the last
// image (at least 8 MiB), or 1,000 records per 8 MiB of image
// (docs/benchmarks.md#what-the-figures-rest-on): each snapshot exports the whole database on the
// thread that paces audio, so with a large database they come less often, and their cost per byte
// written stays the same. Nothing acknowledged is lost.

const MIB = 1024 * 1024;

describe('snapshots with the default thresholds', () => {
  it('come less often as the database grows, and a crash still loses no acknowledged write', { timeout: 120_000 }, async () => {
    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const text = (i: number) => `id: f${i}\n# ${'x'.repeat(250 * 1024)}\n`;

    // About 20 MiB of flows (each text is kept twice: the flow and its version 1).
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push((await store.flows.create({ accountId: account.id, name: `Big ${i}`, yamlContent: text(i) })).id);
    await store.db.close().catch(() => {}); // a final snapshot: the image is now the whole database
    const reopened = closeAfterTest(await openStore({ dataDir }));
    const image = (await stat(join(dataDir, SNAPSHOT_FILE))).size;
    expect(image).toBeGreaterThan(16 * MIB);

    // 1,500 small records: past the fixed 1,000, under 1,000 per 8 MiB of this image.
    for (let i = 0; i < 1_500; i++) await reopened.credits.grant(account.id, 1, 'test', `grant-${i}`);
    expect(reopened.db.stats().snapshotsWritten).toBe(0);

    // More than 8 MiB of journal, yet less than the image: still no snapshot.
    for (let i = 40; i < 58; i++) ids.push((await reopened.flows.create({ accountId: account.id, name: `Big ${i}`, yamlContent: text(i) })).id);
    expect(reopened.db.stats().journalBytes).toBeGreaterThan(8 * MIB);
    expect(reopened.db.stats().snapshotsWritten).toBe(0);

    // Once the journal is as large as the image, one is taken.
    for (let i = 58; reopened.db.stats().snapshotsWritten === 0 && i < 120; i++) {
      ids.push((await reopened.flows.create({ accountId: account.id, name: `Big ${i}`, yamlContent: text(i) })).id);
    }
    expect(reopened.db.stats().snapshotsWritten).toBe(1);

    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    expect((await afterCrash.flows.list(account.id)).map((flow) => flow.id)).toEqual(ids);
    expect(await afterCrash.credits.balance(account.id)).toBe(1_500);
  });
});
