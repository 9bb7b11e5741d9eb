// Bringing a data dir back to its last durable state at open: load and check the snapshot,
// replay the journal past it, cut off a torn tail, then migrate the schema.

import { open, readFile } from 'node:fs/promises';
import { StoreCorruptError, StoreSchemaTooNewError } from '../errors.ts';
import { readJournalFile, scanJournal } from './journal.ts';
import type { JournalRecord, JournalTail } from './journal.ts';
import type { Migration } from './migrations.ts';
import { openConnection } from './sqlite-connection.ts';
import type { SqliteConnection } from './sqlite-connection.ts';

/** What open found and did; worth a log line when anything was dropped. */
export interface RecoveryReport {
  /** The seq the snapshot file was taken at (0 without a snapshot). */
  snapshotSeq: number;
  /** Journal records applied on top of the snapshot. */
  replayedRecords: number;
  /** Bytes cut from the end of the journal: a write torn by a crash, never acknowledged. */
  droppedTailBytes: number;
  tail: JournalTail;
  migrationsApplied: number;
}

export interface RecoveredState {
  conn: SqliteConnection;
  report: RecoveryReport;
  /** The seq of the last change applied in memory. */
  lastSeq: number;
  /** The journal's length after the tail was cut. */
  journalBytes: number;
  journalRecords: number;
}

// Engine bookkeeping lives in the database itself so the snapshot image carries it atomically.
const META_TABLE = 'CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value)';

export function readMetaNumber(conn: SqliteConnection, key: string): number {
  const row = conn.get<{ value: unknown }>('SELECT value FROM _meta WHERE key = ?', [key]);
  return typeof row?.value === 'number' ? row.value : 0;
}

export function writeMetaNumber(conn: SqliteConnection, key: string, value: number): void {
  conn.run('INSERT INTO _meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [
    key,
    value,
  ]);
}

export async function recover(options: {
  wasmPath: string;
  snapshotPath: string;
  journalPath: string;
  migrations: readonly Migration[];
  fsync: boolean;
}): Promise<RecoveredState> {
  const { snapshotPath, journalPath } = options;
  const conn = await loadSnapshot(options.wasmPath, snapshotPath);
  try {
    conn.exec(META_TABLE);
    // Per connection, not stored in the file, so it is set again on every open.
    conn.exec('PRAGMA foreign_keys = ON');
    const snapshotSeq = readMetaNumber(conn, 'snapshot_seq');

    const bytes = await readJournalFile(journalPath);
    const scan = scanJournal(bytes, journalPath);
    let lastSeq = snapshotSeq;
    let replayedRecords = 0;
    for (const record of scan.records) {
      // Records at or below the snapshot's seq are already in it: a crash came between writing
      // the snapshot and emptying the journal.
      if (record.seq <= snapshotSeq) continue;
      if (record.seq !== lastSeq + 1) {
        throw new StoreCorruptError(
          journalPath,
          `record seq ${record.seq} follows seq ${lastSeq}; the journal does not belong to this snapshot`,
        );
      }
      replay(conn, record, journalPath);
      lastSeq = record.seq;
      replayedRecords++;
    }
    if (scan.validLength < bytes.length) await truncateFile(journalPath, scan.validLength, options.fsync);

    const migrationsApplied = migrate(conn, options.migrations, snapshotPath);
    return {
      conn,
      lastSeq,
      journalBytes: scan.validLength,
      journalRecords: scan.records.length,
      report: {
        snapshotSeq,
        replayedRecords,
        droppedTailBytes: bytes.length - scan.validLength,
        tail: scan.tail,
        migrationsApplied,
      },
    };
  } catch (error) {
    conn.close();
    throw error;
  }
}

async function loadSnapshot(wasmPath: string, snapshotPath: string): Promise<SqliteConnection> {
  let image: Uint8Array | null = null;
  try {
    image = await readFile(snapshotPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const conn = await openConnection(wasmPath, image);
  if (image === null) {
    conn.keepRollbackJournalInMemory();
    return conn;
  }
  let problems: string[];
  try {
    problems = conn.integrityCheck();
  } catch (error) {
    // sql.js only reads the header at the first query, so "not a database" surfaces here.
    conn.close();
    throw new StoreCorruptError(snapshotPath, (error as Error).message, { cause: error });
  }
  if (problems.length !== 1 || problems[0] !== 'ok') {
    conn.close();
    throw new StoreCorruptError(snapshotPath, `integrity_check reports ${problems.slice(0, 5).join('; ')}`);
  }
  conn.keepRollbackJournalInMemory();
  return conn;
}

function replay(conn: SqliteConnection, record: JournalRecord, journalPath: string): void {
  conn.exec('BEGIN');
  try {
    for (const statement of record.statements) conn.run(statement.sql, statement.params);
    conn.exec('COMMIT');
  } catch (error) {
    conn.rollbackQuietly();
    // Statements are deterministic, so a record that applied once must apply again; if it does
    // not, dropping it would silently lose an acknowledged write.
    throw new StoreCorruptError(journalPath, `record seq ${record.seq} no longer applies (${(error as Error).message})`, {
      cause: error,
    });
  }
}

function migrate(conn: SqliteConnection, migrations: readonly Migration[], snapshotPath: string): number {
  const current = readMetaNumber(conn, 'schema_version');
  const known = migrations.reduce((max, migration) => Math.max(max, migration.version), 0);
  if (current > known) throw new StoreSchemaTooNewError(snapshotPath, current, known);
  const pending = migrations.filter((migration) => migration.version > current).sort((a, b) => a.version - b.version);
  for (const migration of pending) {
    conn.exec('BEGIN');
    try {
      conn.exec(migration.sql);
      writeMetaNumber(conn, 'schema_version', migration.version);
      conn.exec('COMMIT');
    } catch (error) {
      conn.rollbackQuietly();
      throw new Error(`Migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  return pending.length;
}

async function truncateFile(path: string, length: number, fsync: boolean): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.truncate(length);
    if (fsync) await handle.datasync();
  } finally {
    await handle.close();
  }
}
