// One writer per data dir: the Electron app and a headless `--serve` on the same machine must
// never both append to one journal. The lockfile holds the owner's pid; a lock whose pid is no
// longer running is left over from a crash and is taken over.
//
// Known limits, accepted for a single-machine desktop store: two processes taking over the same
// stale lock at the same instant can both succeed (the re-read below narrows but cannot close
// that window without OS file locks, which Node does not expose), and a stale pid reused by an
// unrelated process after a reboot reads as alive; the error message says which file to delete.

import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeIfPresent } from './durable-files.ts';
import { StoreLockedError } from './errors.ts';

export const LOCK_FILE = 'voxflow.lock';

export interface HeldLock {
  path: string;
  /** Removes the lockfile if it is still ours. Safe to call more than once. */
  release(): Promise<void>;
}

export async function acquireLock(dataDir: string): Promise<HeldLock> {
  const path = join(dataDir, LOCK_FILE);
  // Two attempts: the first may meet a stale lock, which is removed before the second.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await createExclusive(path)) {
      if ((await readOwner(path)) !== process.pid) break; // lost a takeover race
      return { path, release: () => releaseIfOurs(path) };
    }
    const owner = await readOwner(path);
    if (owner !== null && isRunning(owner)) throw new StoreLockedError(dataDir, owner, path);
    // No owner means the file vanished (its owner closed) or was left empty by a crash between
    // create and write; either way nobody holds it.
    await removeIfPresent(path);
  }
  const owner = (await readOwner(path)) ?? 0;
  throw new StoreLockedError(dataDir, owner, path);
}

async function createExclusive(path: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(`${process.pid}\n`);
  } finally {
    await handle.close();
  }
  return true;
}

async function readOwner(path: string): Promise<number | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user, so it is running.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function releaseIfOurs(path: string): Promise<void> {
  if ((await readOwner(path)) === process.pid) await removeIfPresent(path);
}
