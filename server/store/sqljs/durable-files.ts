// Async file helpers with the ordering a crash-safe store needs. Only async fs: the same event
// loop carries real-time audio, and a synchronous fsync can stall it for tens of milliseconds.

import { chmod, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** `write` may write fewer bytes than asked (a signal, a full disk); loop until all are out. */
export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    if (bytesWritten === 0) throw new Error('the file accepted no bytes');
    offset += bytesWritten;
  }
}

/**
 * writeAll without leaving the thread: for a journal append of a few KiB, a copy into the page
 * cache that takes microseconds, where a write through libuv's thread pool costs a hand-off to a
 * pool thread and back (two thread wake-ups) before the fsync can even start.
 */
export function writeAllNow(handle: FileHandle, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    const bytesWritten = writeSync(handle.fd, bytes, offset, bytes.length - offset);
    if (bytesWritten === 0) throw new Error('the file accepted no bytes');
    offset += bytesWritten;
  }
}

/**
 * Makes a rename or a new file in `dir` durable. Windows cannot open a directory for fsync and
 * NTFS journals renames itself, so there it is skipped.
 */
export async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `path` with `bytes` so that after a crash at any point the file holds either the old
 * or the new content in full: write a temp file beside it, fsync it, rename it over `path`,
 * fsync the directory. Writing `path` in place would truncate it first and leave a torn file.
 */
export async function replaceFileAtomically(path: string, bytes: Uint8Array, fsync: boolean): Promise<void> {
  const tempPath = temporaryPathFor(path);
  const handle = await open(tempPath, 'w', PRIVATE_FILE_MODE);
  try {
    await writeAll(handle, bytes);
    if (fsync) await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(tempPath).catch(() => {});
    throw error;
  }
  await handle.close();
  await rename(tempPath, path);
  if (fsync) await syncDirectory(dirname(path));
}

/**
 * The data dir holds emails, password hashes, flows and sealed keys: only its owner may list or
 * read it. Files are created 0600 (the umask may only narrow that) and the dir 0700.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates the data dir owner-only, or narrows an existing one to that: a dir made by an older
 * Voxflow (0755, files 0644) is tightened on the next start. Not possible on Windows, and not
 * for a dir another user owns; those keep what they have.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await narrowMode(dir, PRIVATE_DIR_MODE);
}

/** Narrows an existing file to owner-only (files written by an older Voxflow were 0644). */
export async function makePrivate(path: string): Promise<void> {
  await narrowMode(path, PRIVATE_FILE_MODE);
}

async function narrowMode(path: string, mode: number): Promise<void> {
  if (process.platform === 'win32') return;
  try {
    // Only what is really ours: chmod follows a symlink, and the target may be anything (a
    // device, a file shared with other programs).
    if ((await lstat(path)).isSymbolicLink()) return;
    await chmod(path, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EPERM') throw error;
  }
}

export function temporaryPathFor(path: string): string {
  return `${dirname(path)}/${basename(path)}.tmp`;
}

/** Removes a file, treating "already gone" as success. */
export async function removeIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
