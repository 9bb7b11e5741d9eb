import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_FILE } from '../../server/store/sqljs/database.ts';
import { StoreCorruptError } from '../../server/store/errors.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { tempDataDir } from './helpers.ts';

async function closedDirWithData(): Promise<string> {
  const dataDir = await tempDataDir();
  const store = await openStore({ dataDir });
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
  for (let i = 0; i < 50; i++) {
    await store.flows.create({ accountId: account.id, name: `Flow ${i}`, yamlContent: 'x'.repeat(2000) });
  }
  await store.close();
  return dataDir;
}

describe('a damaged snapshot', () => {
  it('is refused with an error naming the file when it is not a database at all', async () => {
    const dataDir = await closedDirWithData();
    await writeFile(join(dataDir, SNAPSHOT_FILE), Buffer.alloc(8192, 0x5a));

    const opening = openStore({ dataDir });
    await expect(opening).rejects.toBeInstanceOf(StoreCorruptError);
    await expect(opening).rejects.toThrow(SNAPSHOT_FILE);
  });

  it('is refused when integrity_check finds damaged pages', async () => {
    const dataDir = await closedDirWithData();
    const path = join(dataDir, SNAPSHOT_FILE);
    const bytes = await readFile(path);
    const pageSize = bytes.readUInt16BE(16);
    // Scribble over the b-tree header of page 3; the file header stays valid.
    bytes.fill(0xa5, 2 * pageSize, 2 * pageSize + 64);
    await writeFile(path, bytes);

    await expect(openStore({ dataDir })).rejects.toBeInstanceOf(StoreCorruptError);
  });
});
