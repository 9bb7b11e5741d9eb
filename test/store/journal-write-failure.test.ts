import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOURNAL_FILE } from '../../server/store/sqljs/database.ts';
import { StoreFailedError } from '../../server/store/errors.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

// /dev/full accepts an open and fails every write with ENOSPC: a full disk, for real.
describe.runIf(existsSync('/dev/full'))('a journal write that fails', () => {
  it('rejects the write, and every later write, instead of carrying on without a journal', async () => {
    const dataDir = await tempDataDir();
    await symlink('/dev/full', join(dataDir, JOURNAL_FILE));
    const store = closeAfterTest(await openStore({ dataDir }));

    const first = store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    await expect(first).rejects.toBeInstanceOf(StoreFailedError);
    await expect(first).rejects.toThrow(/ENOSPC/);
    await expect(store.accounts.create({ email: 'bo@example.com', passwordHash: 'h' })).rejects.toBeInstanceOf(StoreFailedError);
    expect(store.db.stats().failed).toBe(true);
  });

  it('does not save the unacknowledged write in the closing snapshot', async () => {
    const dataDir = await tempDataDir();
    await symlink('/dev/full', join(dataDir, JOURNAL_FILE));
    const store = await openStore({ dataDir });
    await expect(store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' })).rejects.toBeInstanceOf(StoreFailedError);
    await store.close();

    const reopened = closeAfterTest(await openStore({ dataDir }));
    expect(await reopened.accounts.findByEmail('ada@example.com')).toBeNull();
  });
});
