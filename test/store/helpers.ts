// Shared set-up for the store tests: a fresh real directory per test, removed afterwards.

import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JOURNAL_FILE, SNAPSHOT_FILE } from '../../server/store/sqljs/database.ts';
import { loadSqlJs, defaultWasmPath } from '../../server/store/sqljs/sqlite-connection.ts';
import { afterThisTest } from '../support/after-this-test.ts';

/** A new directory, removed after the test (after the stores opened on it are closed). */
export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-'));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `close` after the test, so a failing assertion does not leave a lock or handle behind. */
export function closeAfterTest<T extends { close(): Promise<void> }>(resource: T): T {
  afterThisTest(() => resource.close());
  return resource;
}

/**
 * What a crash would leave on disk: a copy of the journal and the snapshot (not the lockfile)
 * in a new directory, taken while the original store is still open. The journal is copied
 * first: a snapshot rotation may run between the two copies, and a newer snapshot over an
 * older journal is a state a crash can leave (renamed, journal not yet emptied), whereas an
 * older snapshot beside an emptied journal is not.
 */
export async function copyAsIfCrashed(dataDir: string): Promise<string> {
  const copy = await tempDataDir();
  for (const file of [JOURNAL_FILE, SNAPSHOT_FILE]) {
    await copyFile(join(dataDir, file), join(copy, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  return copy;
}

/** `PRAGMA integrity_check` of a snapshot file, read with a fresh sql.js database. */
export async function integrityOfFile(bytes: Uint8Array): Promise<string[]> {
  const SQL = await loadSqlJs(defaultWasmPath());
  const db = new SQL.Database(bytes);
  try {
    return db.exec('PRAGMA integrity_check').flatMap((result) => result.values.map((row) => String(row[0])));
  } finally {
    db.close();
  }
}
