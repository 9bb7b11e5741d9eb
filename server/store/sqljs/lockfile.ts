// One writer per data dir: the Electron app and a headless `--serve` on the same machine must
// never both append to one journal. The lockfile names its owner: pid, the kernel's boot id and
// the process's start time (Linux's /proc; elsewhere only the pid). A lock is held only while
// that very process runs:
// - a lock of another boot is stale (the pid means nothing after a reboot);
// - a lock whose pid now belongs to a process started at another time is stale (pid reused);
// - a lock naming our own pid is stale unless this process holds it: in a container the server
//   often runs as pid 1, and after a `kill -9` the restarted server is pid 1 again;
// - a running owner it cannot tell apart (no /proc, or a lock written by an older Voxflow that
//   wrote only the pid) holds the lock, and the error says which file to delete.
//
// Known limit, accepted for a single-machine store: two processes taking over the same stale
// lock at the same instant can both succeed (the re-read below narrows but cannot close that
// window without OS file locks, which Node does not expose).

import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeIfPresent } from './durable-files.ts';
import { StoreLockedError } from '../errors.ts';

export const LOCK_FILE = 'voxflow.lock';

export interface HeldLock {
  path: string;
  /** Removes the lockfile if it is still ours. Safe to call more than once. */
  release(): Promise<void>;
}

export interface LockOwner {
  pid: number;
  /** /proc/sys/kernel/random/boot_id when the lock was written; null where unknown. */
  bootId: string | null;
  /** The owner's start time in clock ticks since boot (/proc/<pid>/stat field 22); null where unknown. */
  startTicks: string | null;
}

/** Lockfiles this process holds: a lock naming our pid is ours only if it is in here. */
const heldHere = new Set<string>();

export async function acquireLock(dataDir: string): Promise<HeldLock> {
  const path = join(dataDir, LOCK_FILE);
  const me = await currentOwner();
  // Two attempts: the first may meet a stale lock, which is removed before the second.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (await createExclusive(path, me)) {
      if ((await readOwner(path))?.pid !== process.pid) break; // lost a takeover race
      heldHere.add(path);
      return { path, release: () => releaseIfOurs(path) };
    }
    const owner = await readOwner(path);
    if (owner !== null && (await isHeld(owner, path, me))) throw new StoreLockedError(dataDir, owner.pid, path);
    // No owner means the file vanished (its owner closed) or was left empty by a crash between
    // create and write; either way nobody holds it.
    await removeIfPresent(path);
  }
  const owner = await readOwner(path);
  throw new StoreLockedError(dataDir, owner?.pid ?? 0, path);
}

async function isHeld(owner: LockOwner, path: string, me: LockOwner): Promise<boolean> {
  if (owner.pid === process.pid) return heldHere.has(path);
  if (owner.bootId && me.bootId && owner.bootId !== me.bootId) return false;
  if (!isRunning(owner.pid)) return false;
  if (owner.startTicks) {
    const started = await startTicksOf(owner.pid);
    if (started !== null && started !== owner.startTicks) return false;
  }
  return true;
}

async function currentOwner(): Promise<LockOwner> {
  const [bootId, startTicks] = await Promise.all([readProc('/proc/sys/kernel/random/boot_id'), startTicksOf(process.pid)]);
  return { pid: process.pid, bootId: bootId?.trim() || null, startTicks };
}

async function readProc(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

async function startTicksOf(pid: number): Promise<string | null> {
  const stat = await readProc(`/proc/${pid}/stat`);
  if (!stat) return null;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null; // field 22 of the whole line
}

async function createExclusive(path: string, me: LockOwner): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(`${me.pid}\n${me.bootId ?? ''}\n${me.startTicks ?? ''}\n`);
  } finally {
    await handle.close();
  }
  return true;
}

/** The lock's owner: the pid on the first line; an older Voxflow wrote nothing more. */
export async function readOwner(path: string): Promise<LockOwner | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const [pidLine = '', bootId = '', startTicks = ''] = text.split('\n').map((line) => line.trim());
  const pid = Number.parseInt(pidLine, 10);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return { pid, bootId: bootId || null, startTicks: startTicks || null };
}

/** Whether a process of that id runs (on this machine, whoever owns it). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user, so it is running.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function releaseIfOurs(path: string): Promise<void> {
  if (!heldHere.delete(path)) return;
  if ((await readOwner(path))?.pid === process.pid) await removeIfPresent(path);
}
