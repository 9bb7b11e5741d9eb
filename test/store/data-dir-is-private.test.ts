// The data dir holds emails, password hashes, flows and sealed keys: only its owner may read it.
// A dir left by an older Voxflow (0755, files 0644) is narrowed on the next start.
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOURNAL_FILE, SNAPSHOT_FILE } from '../../server/store/sqljs/database.ts';
import { LOCK_FILE } from '../../server/store/sqljs/lockfile.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe.runIf(process.platform !== 'win32')('the data dir', () => {
  it('is created 0700 with the database, journal and lock 0600', async () => {
    const dataDir = join(await tempDataDir(), 'fresh');
    const store = await openStore({ dataDir });
    await store.accounts.create({ email: 'a@example.com', passwordHash: 'x', signupCreditCents: 200 });
    expect(await modeOf(dataDir)).toBe(0o700);
    expect(await modeOf(join(dataDir, JOURNAL_FILE))).toBe(0o600);
    expect(await modeOf(join(dataDir, LOCK_FILE))).toBe(0o600);
    await store.close();
    // The snapshot is written on close.
    expect(await modeOf(join(dataDir, SNAPSHOT_FILE))).toBe(0o600);
  });

  it('is narrowed to owner-only when an older version left it readable by everyone', async () => {
    const dataDir = join(await tempDataDir(), 'old');
    await mkdir(dataDir);
    await chmod(dataDir, 0o755);
    await writeFile(join(dataDir, JOURNAL_FILE), '');
    await chmod(join(dataDir, JOURNAL_FILE), 0o644);
    closeAfterTest(await openStore({ dataDir }));
    expect(await modeOf(dataDir)).toBe(0o700);
    expect(await modeOf(join(dataDir, JOURNAL_FILE))).toBe(0o600);
  });
});
