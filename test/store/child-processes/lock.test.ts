import { spawn } from 'node:child_process';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreLockedError } from '../../../server/store/errors.ts';
import { LOCK_FILE } from '../../../server/store/sqljs/lockfile.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { closeAfterTest, tempDataDir } from '../helpers.ts';

/** The pid of a process that has already exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('the data dir lock', () => {
  it('refuses a second open of a dir that is open, naming the dir and the owner pid', async () => {
    const dataDir = await tempDataDir();
    closeAfterTest(await openStore({ dataDir }));

    const second = openStore({ dataDir });
    await expect(second).rejects.toBeInstanceOf(StoreLockedError);
    await expect(second).rejects.toThrow(dataDir);
    await expect(second).rejects.toThrow(`pid ${process.pid}`);
  });

  it('is released on close, so the dir opens again', async () => {
    const dataDir = await tempDataDir();
    const first = await openStore({ dataDir });
    await first.close();
    await expect(access(join(dataDir, LOCK_FILE))).rejects.toThrow();

    closeAfterTest(await openStore({ dataDir }));
  });

  it('is taken over when the process that held it is dead', async () => {
    const dataDir = await tempDataDir();
    await writeFile(join(dataDir, LOCK_FILE), `${await deadPid()}\n`);

    closeAfterTest(await openStore({ dataDir }));
    expect((await readFile(join(dataDir, LOCK_FILE), 'utf8')).split('\n')[0]).toBe(String(process.pid));
  });

  it('refuses a dir whose lock belongs to another running process', async () => {
    const dataDir = await tempDataDir();
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30_000)']);
    try {
      await writeFile(join(dataDir, LOCK_FILE), `${other.pid}\n`);
      const opening = openStore({ dataDir });
      await expect(opening).rejects.toBeInstanceOf(StoreLockedError);
      await expect(opening).rejects.toMatchObject({ pid: other.pid });
    } finally {
      other.kill();
    }
  });
});
