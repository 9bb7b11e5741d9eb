// A lock is held only while the very process that wrote it runs. A server restarted after a
// `kill -9` must not be refused by its own dead lock — in a container it is pid 1 both times —
// nor by a lock from another boot or a pid since reused by another program.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreLockedError } from '../../../server/store/errors.ts';
import { LOCK_FILE, readOwner } from '../../../server/store/sqljs/lockfile.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { closeAfterTest, tempDataDir } from '../helpers.ts';

const LINUX = process.platform === 'linux';
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

async function runningProcess(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30_000)']);
  children.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child.pid!;
}

async function startTicksOf(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

const bootId = async () => (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();

describe('the data dir lock names its owner', () => {
  it('writes the pid, the boot and the start time of the process that holds it', async () => {
    const dataDir = await tempDataDir();
    closeAfterTest(await openStore({ dataDir }));
    const owner = await readOwner(join(dataDir, LOCK_FILE));
    expect(owner?.pid).toBe(process.pid);
    if (LINUX) expect(owner).toEqual({ pid: process.pid, bootId: await bootId(), startTicks: await startTicksOf(process.pid) });
  });

  it("takes over a lock naming this process's own pid that this process does not hold (a restart as pid 1)", async () => {
    const dataDir = await tempDataDir();
    await writeFile(join(dataDir, LOCK_FILE), `${process.pid}\n`);
    const store = closeAfterTest(await openStore({ dataDir }));
    expect(store).toBeDefined();
    // …and still refuses a second open while this process holds it.
    await expect(openStore({ dataDir })).rejects.toBeInstanceOf(StoreLockedError);
  });

  it.runIf(LINUX)('takes over the lock of a process from another boot, even if its pid runs now', async () => {
    const dataDir = await tempDataDir();
    const pid = await runningProcess();
    await writeFile(join(dataDir, LOCK_FILE), `${pid}\n00000000-0000-4000-8000-000000000000\n${await startTicksOf(pid)}\n`);
    closeAfterTest(await openStore({ dataDir }));
    expect((await readOwner(join(dataDir, LOCK_FILE)))?.pid).toBe(process.pid);
  });

  it.runIf(LINUX)('takes over a lock whose pid now belongs to a process started at another time', async () => {
    const dataDir = await tempDataDir();
    const pid = await runningProcess();
    const otherStart = String(Number(await startTicksOf(pid)) - 12_345);
    await writeFile(join(dataDir, LOCK_FILE), `${pid}\n${await bootId()}\n${otherStart}\n`);
    closeAfterTest(await openStore({ dataDir }));
    expect((await readOwner(join(dataDir, LOCK_FILE)))?.pid).toBe(process.pid);
  });

  it('refuses while the owner it names is that very process, still running', async () => {
    const dataDir = await tempDataDir();
    const pid = await runningProcess();
    const identity = LINUX ? `${pid}\n${await bootId()}\n${await startTicksOf(pid)}\n` : `${pid}\n`;
    await writeFile(join(dataDir, LOCK_FILE), identity);
    await expect(openStore({ dataDir })).rejects.toMatchObject({ name: 'StoreLockedError', pid });
  });
});
