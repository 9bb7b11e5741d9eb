// The embedded durable database: sql.js in memory, made durable by a checksummed journal of
// committed statements plus periodic snapshots of the whole image.
//
// Over 400 lines on purpose: the write queue, group commit, snapshot rotation and close share
// one private state (the queue, the seq counters, the closed/failed flags) whose order is the
// durability argument (a snapshot is taken between journal batches, never inside one); split
// across files, that order would have no single place to be read. The journal format, recovery,
// the lock, the file-level durability steps and the SQL connection are apart.
//
// Write path: `write(fn)` runs `fn` synchronously inside BEGIN/COMMIT and records every
// mutating statement with its parameters. After COMMIT the statements become one journal
// record; the promise resolves once that record is fsync'd. Records committed while an fsync
// is in flight go out together in the next batch (group commit), so a burst of writes costs
// about one fsync, not one each.
//
// Replay reproduces state only because every recorded statement is deterministic from its
// SQL and parameters: ids and times are made in JS and bound as parameters, never produced by
// SQLite (random(), CURRENT_TIMESTAMP, 'now'); write-transaction.ts refuses the ones it can spot.
//
// Snapshots: when the journal passes a record or byte threshold, and on close, the whole image
// is exported (outside any transaction, between journal batches in the same queue), written
// to a temp file, fsync'd, renamed over voxflow.db, and the directory fsync'd; only then is
// the journal emptied. `_meta.snapshot_seq` inside the image tells replay where to resume.
// export() blocks the event loop for about 1 ms per MiB of database, on the same thread as
// audio. So by default the thresholds grow with the database: a snapshot waits until
// the journal holds as many bytes as the last image (at least 8 MiB), or 1,000 records per
// 8 MiB of image (at least 1,000). Its cost per byte written then stays about the same however
// large the database, and a replay at open is never longer than about one snapshot's worth of
// journal; without that, every tenant's small writes paid for an export of every tenant's
// flows each 1,000 records. Each export still blocks its thread for ~1 ms/MiB: the server runs
// this store in a worker thread (worker-store.ts), so that thread is not the one pacing audio.
//
// Reads see every committed write at once, including one whose fsync is still in flight (an
// in-memory database cannot hide it); `durable()` waits for those, and the server's store
// (store-worker.ts) answers no call before what it read is on disk. A write that made no change still waits until every
// earlier record is durable, so an outcome it reports (a duplicate debit, say) is never one
// that a crash could take back.

import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PRIVATE_FILE_MODE, ensurePrivateDir, makePrivate, removeIfPresent, replaceFileAtomically, syncDirectory, temporaryPathFor, writeAll, writeAllNow } from './durable-files.ts';
import { StoreClosedError, StoreFailedError } from '../errors.ts';
import { encodeRecord } from './journal.ts';
import type { RecordedStatement, SqlParams } from './journal.ts';
import { acquireLock } from './lockfile.ts';
import type { HeldLock } from './lockfile.ts';
import { MIGRATIONS } from './migrations.ts';
import type { Migration } from './migrations.ts';
import { recover, writeMetaNumber } from './recovery.ts';
import type { RecoveryReport } from './recovery.ts';
import { defaultWasmPath } from './sqlite-connection.ts';
import type { SqliteConnection, SqlRow } from './sqlite-connection.ts';
import { runRecordedTransaction } from './write-transaction.ts';
import type { WriteTransaction } from './write-transaction.ts';

export type { RecoveryReport } from './recovery.ts';
export type { SqlParam, SqlParams } from './journal.ts';
export type { SqlRow } from './sqlite-connection.ts';
export type { WriteTransaction } from './write-transaction.ts';

export const SNAPSHOT_FILE = 'voxflow.db';
export const JOURNAL_FILE = 'voxflow.journal';

export interface OpenDatabaseOptions {
  dataDir: string;
  /** Off only for throwaway data (some tests, benches): acknowledged writes may then be lost. */
  fsync?: boolean;
  snapshotEveryRecords?: number;
  snapshotEveryBytes?: number;
  /** Unix seconds, fractional; injected so tests control expiry and ordering. */
  now?: () => number;
  /** The sql.js WASM; Electron passes the copy unpacked from the asar. */
  wasmPath?: string;
  migrations?: readonly Migration[];
  /**
   * A failed snapshot is not fatal (the journal still holds everything and keeps growing until
   * the next attempt), but somebody should hear of it. Defaults to a process warning.
   */
  onSnapshotError?: (error: unknown) => void;
  /**
   * Called once, as the store stops accepting writes (a journal write failed), before any
   * write hears of it: the store's worker (worker-store.ts) tells /health from here.
   */
  onFailure?: (error: unknown) => void;
  /**
   * The caller holds the data dir's lock and releases it after close (worker-store.ts: the
   * main thread holds it, as the lockfile's record of what this process holds is per thread).
   */
  lockHeldByCaller?: boolean;
}

export interface DatabaseStats {
  /** The seq of the last committed write (in memory). */
  lastSeq: number;
  /** Every write up to this seq is on disk. */
  durableSeq: number;
  snapshotSeq: number;
  journalBytes: number;
  journalRecords: number;
  /** Journal appends that reached the disk; fewer than writes when group commit batched them. */
  journalBatches: number;
  snapshotsWritten: number;
  failed: boolean;
}

export interface Database {
  readonly dataDir: string;
  /** What open found: replayed records, a dropped torn tail, applied migrations. */
  readonly recovery: RecoveryReport;
  /**
   * Runs `fn` in a transaction and resolves with its result once the change is durable; this
   * await is the durable write latency. `fn` must be synchronous; if it throws, nothing is
   * kept and the promise rejects with that error.
   */
  write<T>(fn: (tx: WriteTransaction) => T): Promise<T>;
  get<Row = SqlRow>(sql: string, params?: SqlParams): Row | undefined;
  all<Row = SqlRow>(sql: string, params?: SqlParams): Row[];
  now(): number;
  /**
   * Resolves once every write committed so far is on disk (at once when none is in flight):
   * what a read sees now can then no longer be taken back by a crash. Rejects if the store failed.
   */
  durable(): Promise<void>;
  stats(): DatabaseStats;
  /** Waits for pending writes, snapshots, releases the lock. Idempotent. */
  close(): Promise<void>;
}

/** A batch of journal records up to this size is joined into one write; larger, written record by record. */
const COPY_INTO_ONE_WRITE_BYTES = 64 * 1024;
const DEFAULT_SNAPSHOT_EVERY_RECORDS = 1000;
const DEFAULT_SNAPSHOT_EVERY_BYTES = 8 * 1024 * 1024;

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const dataDir = resolve(options.dataDir);
  await ensurePrivateDir(dataDir);
  const lock: HeldLock = options.lockHeldByCaller ? { path: '', release: async () => {} } : await acquireLock(dataDir);
  const snapshotPath = join(dataDir, SNAPSHOT_FILE);
  const journalPath = join(dataDir, JOURNAL_FILE);
  const fsync = options.fsync ?? true;
  let conn: SqliteConnection | undefined;
  let journal: FileHandle | undefined;
  try {
    // A temp snapshot is a save that a crash interrupted before its rename: never valid.
    await removeIfPresent(temporaryPathFor(snapshotPath));
    const recovered = await recover({
      wasmPath: options.wasmPath ?? defaultWasmPath(),
      snapshotPath,
      journalPath,
      migrations: options.migrations ?? MIGRATIONS,
      fsync,
    });
    conn = recovered.conn;
    journal = await open(journalPath, 'a', PRIVATE_FILE_MODE);
    await Promise.all([makePrivate(journalPath), makePrivate(snapshotPath)]);
    // The journal may have just been created: its directory entry must be durable before any
    // record in it is acknowledged.
    if (fsync) await syncDirectory(dataDir);
    const db = new JournaledDatabase({
      dataDir,
      snapshotPath,
      conn,
      journal,
      lock,
      fsync,
      recovered,
      snapshotEveryRecords: options.snapshotEveryRecords ?? DEFAULT_SNAPSHOT_EVERY_RECORDS,
      snapshotEveryBytes: options.snapshotEveryBytes ?? DEFAULT_SNAPSHOT_EVERY_BYTES,
      scaleWithImage: options.snapshotEveryRecords === undefined && options.snapshotEveryBytes === undefined,
      imageBytes: await fileSize(snapshotPath),
      now: options.now ?? (() => Date.now() / 1000),
      onSnapshotError: options.onSnapshotError ?? ((error) => process.emitWarning(`Voxflow snapshot failed: ${String(error)}`)),
      onFailure: options.onFailure ?? (() => {}),
    });
    // Migrations are not journaled: the snapshot makes them durable in one step. Until it is
    // on disk the old snapshot and journal are still there, and the next open migrates again.
    if (recovered.report.migrationsApplied > 0) await db.snapshotAtOpen();
    return db;
  } catch (error) {
    conn?.close();
    await journal?.close();
    await lock.release();
    throw error;
  }
}

interface PendingWrite {
  seq: number;
  /** Null for a write that changed nothing and only waits for earlier records. */
  bytes: Buffer | null;
  resolve: () => void;
  reject: (error: unknown) => void;
}

class JournaledDatabase implements Database {
  readonly dataDir: string;
  readonly recovery: RecoveryReport;
  readonly #snapshotPath: string;
  readonly #conn: SqliteConnection;
  readonly #journal: FileHandle;
  readonly #lock: HeldLock;
  readonly #fsync: boolean;
  readonly #snapshotEveryRecords: number;
  readonly #snapshotEveryBytes: number;
  readonly #now: () => number;
  readonly #onSnapshotError: (error: unknown) => void;
  readonly #onFailure: (error: unknown) => void;

  #lastSeq: number;
  #durableSeq: number;
  #snapshotSeq: number;
  #journalBytes: number;
  #journalRecords: number;
  #journalBatches = 0;
  #snapshotsWritten = 0;
  // After a failed snapshot, the next try waits for another threshold's worth of journal.
  #snapshotAtRecords: number;
  #snapshotAtBytes: number;
  /** Thresholds grow with the image (the defaults), or stay as the options set them. */
  readonly #scaleWithImage: boolean;
  /** Bytes of the last snapshot written (or found at open). */
  #imageBytes: number;

  #pending: PendingWrite[] = [];
  #queueRunning = false;
  #queueDone: Promise<void> = Promise.resolve();
  #inWrite = false;
  #failure: unknown = null;
  #closing = false;
  #closed = false;
  #closePromise: Promise<void> | null = null;

  constructor(init: {
    dataDir: string;
    snapshotPath: string;
    conn: SqliteConnection;
    journal: FileHandle;
    lock: HeldLock;
    fsync: boolean;
    recovered: { report: RecoveryReport; lastSeq: number; journalBytes: number; journalRecords: number };
    snapshotEveryRecords: number;
    snapshotEveryBytes: number;
    scaleWithImage: boolean;
    imageBytes: number;
    now: () => number;
    onSnapshotError: (error: unknown) => void;
    onFailure: (error: unknown) => void;
  }) {
    this.dataDir = init.dataDir;
    this.recovery = init.recovered.report;
    this.#snapshotPath = init.snapshotPath;
    this.#conn = init.conn;
    this.#journal = init.journal;
    this.#lock = init.lock;
    this.#fsync = init.fsync;
    this.#snapshotEveryRecords = init.snapshotEveryRecords;
    this.#snapshotEveryBytes = init.snapshotEveryBytes;
    this.#now = init.now;
    this.#onSnapshotError = init.onSnapshotError;
    this.#onFailure = init.onFailure;
    this.#lastSeq = init.recovered.lastSeq;
    this.#durableSeq = init.recovered.lastSeq;
    this.#snapshotSeq = init.recovered.report.snapshotSeq;
    this.#journalBytes = init.recovered.journalBytes;
    this.#journalRecords = init.recovered.journalRecords;
    this.#scaleWithImage = init.scaleWithImage;
    this.#imageBytes = init.imageBytes;
    this.#snapshotAtRecords = this.#recordsBetweenSnapshots();
    this.#snapshotAtBytes = this.#bytesBetweenSnapshots();
  }

  write<T>(fn: (tx: WriteTransaction) => T): Promise<T> {
    if (this.#failure !== null) return Promise.reject(new StoreFailedError(this.#failure));
    if (this.#closing) return Promise.reject(new StoreClosedError());
    if (this.#inWrite) {
      // A nested BEGIN would fail, and its ROLLBACK would undo the outer write.
      return Promise.reject(new Error('db.write was called from inside another write callback'));
    }
    let recorded: { result: T; statements: RecordedStatement[] };
    this.#inWrite = true;
    try {
      recorded = runRecordedTransaction(this.#conn, fn);
    } catch (error) {
      return Promise.reject(error);
    } finally {
      this.#inWrite = false;
    }

    const { result, statements } = recorded;
    if (statements.length === 0) return this.#whenDurable(this.#lastSeq).then(() => result);
    const seq = ++this.#lastSeq;
    const bytes = encodeRecord({ seq, statements });
    return new Promise<T>((resolvePromise, reject) => {
      this.#pending.push({ seq, bytes, resolve: () => resolvePromise(result), reject });
      this.#startQueue();
    });
  }

  get<Row = SqlRow>(sql: string, params: SqlParams = []): Row | undefined {
    if (this.#closed) throw new StoreClosedError();
    return this.#conn.get<Row>(sql, params);
  }

  all<Row = SqlRow>(sql: string, params: SqlParams = []): Row[] {
    if (this.#closed) throw new StoreClosedError();
    return this.#conn.all<Row>(sql, params);
  }

  now(): number {
    return this.#now();
  }

  durable(): Promise<void> {
    return this.#whenDurable(this.#lastSeq);
  }

  stats(): DatabaseStats {
    return {
      lastSeq: this.#lastSeq,
      durableSeq: this.#durableSeq,
      snapshotSeq: this.#snapshotSeq,
      journalBytes: this.#journalBytes,
      journalRecords: this.#journalRecords,
      journalBatches: this.#journalBatches,
      snapshotsWritten: this.#snapshotsWritten,
      failed: this.#failure !== null,
    };
  }

  close(): Promise<void> {
    this.#closePromise ??= this.#closeOnce();
    return this.#closePromise;
  }

  /** Called once by openDatabase, before anyone can write. */
  async snapshotAtOpen(): Promise<void> {
    await this.#snapshot();
  }

  async #closeOnce(): Promise<void> {
    this.#closing = true;
    try {
      while (this.#queueRunning) await this.#queueDone;
      const unsnapshotted = this.#lastSeq !== this.#snapshotSeq || this.#journalBytes > 0;
      // A failed store holds changes whose writes were rejected; saving them would make them durable.
      if (this.#failure === null && unsnapshotted) await this.#snapshot();
    } finally {
      this.#closed = true;
      this.#conn.close();
      await this.#journal.close().catch(() => {});
      await this.#lock.release();
    }
  }

  #whenDurable(seq: number): Promise<void> {
    if (this.#failure !== null) return Promise.reject(new StoreFailedError(this.#failure));
    if (seq <= this.#durableSeq) return Promise.resolve();
    return new Promise<void>((resolvePromise, reject) => {
      this.#pending.push({ seq, bytes: null, resolve: resolvePromise, reject });
      this.#startQueue();
    });
  }

  #startQueue(): void {
    if (this.#queueRunning) return;
    this.#queueRunning = true;
    // Started on a microtask so that I/O and snapshots never run on the stack of a write call.
    this.#queueDone = Promise.resolve()
      .then(() => this.#runQueue())
      .catch((error: unknown) => this.#fail(error, []))
      .finally(() => {
        this.#queueRunning = false;
        // A write that slipped in between the loop's last check and here must not be stranded.
        if (this.#pending.length > 0 && this.#failure === null) this.#startQueue();
      });
  }

  // The write queue: journal batches and snapshots take turns here and nowhere else, so no
  // record can be appended between a snapshot's export and the journal reset that follows it.
  async #runQueue(): Promise<void> {
    while (this.#failure === null) {
      if (this.#snapshotDue()) {
        await this.#rotate();
      } else if (this.#pending.length > 0) {
        await this.#appendBatch(this.#pending.splice(0));
      } else {
        return;
      }
    }
  }

  async #appendBatch(batch: PendingWrite[]): Promise<void> {
    let bytes = 0;
    let records = 0;
    try {
      // Every record committed before the fsync starts rides on it: records that arrive while
      // the batch is being written are appended too, then one fsync covers them all.
      for (let taken = batch; taken.length > 0; taken = this.#takeRecordsForThisSync(batch)) {
        const chunks: Buffer[] = [];
        for (const entry of taken) if (entry.bytes) chunks.push(entry.bytes);
        if (chunks.length === 0) continue;
        const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
        // Many small records: one write of them joined, made from this thread (a copy into the
        // page cache, microseconds; through the thread pool it cost two thread hand-offs on the
        // way to every fsync: one writer's session start waits on it). Large ones (a flow
        // upload's is 520 KiB) are written one after another, through the pool, instead of being
        // copied into a new buffer on this thread; the one fsync below still covers them all, so
        // nothing is acknowledged sooner.
        if (size <= COPY_INTO_ONE_WRITE_BYTES) writeAllNow(this.#journal, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
        else for (const chunk of chunks) await writeAll(this.#journal, chunk);
        bytes += size;
        records += chunks.length;
      }
      if (bytes > 0 && this.#fsync) await this.#journal.datasync();
    } catch (error) {
      this.#fail(error, batch);
      return;
    }
    this.#journalBytes += bytes;
    this.#journalRecords += records;
    if (bytes > 0) this.#journalBatches++;
    this.#markDurable(batch.reduce((max, entry) => Math.max(max, entry.seq), this.#durableSeq));
    for (const entry of batch) entry.resolve();
  }

  /**
   * Records committed while the batch was being written, moved into the batch (and returned) so
   * that the same fsync covers them; none once a snapshot is due, which must run between batches.
   */
  #takeRecordsForThisSync(batch: PendingWrite[]): PendingWrite[] {
    if (this.#pending.length === 0 || this.#snapshotDue()) return [];
    const taken = this.#pending.splice(0);
    batch.push(...taken);
    return taken;
  }

  #bytesBetweenSnapshots(): number {
    return this.#scaleWithImage ? Math.max(this.#snapshotEveryBytes, this.#imageBytes) : this.#snapshotEveryBytes;
  }

  #recordsBetweenSnapshots(): number {
    if (!this.#scaleWithImage) return this.#snapshotEveryRecords;
    return Math.max(this.#snapshotEveryRecords, Math.ceil((this.#snapshotEveryRecords * this.#imageBytes) / this.#snapshotEveryBytes));
  }

  #snapshotDue(): boolean {
    return this.#journalRecords >= this.#snapshotAtRecords || this.#journalBytes >= this.#snapshotAtBytes;
  }

  async #rotate(): Promise<void> {
    try {
      await this.#snapshot();
    } catch (error) {
      if (this.#failure !== null) return;
      this.#snapshotAtRecords = this.#journalRecords + this.#recordsBetweenSnapshots();
      this.#snapshotAtBytes = this.#journalBytes + this.#bytesBetweenSnapshots();
      this.#onSnapshotError(error);
    }
  }

  async #snapshot(): Promise<void> {
    // Everything committed so far is in the image, including writes still waiting in #pending:
    // the seq must say so, or replay would apply those again on top of the snapshot.
    const seq = this.#lastSeq;
    writeMetaNumber(this.#conn, 'snapshot_seq', seq);
    const image = this.#conn.export();
    await replaceFileAtomically(this.#snapshotPath, image, this.#fsync);
    this.#snapshotSeq = seq;
    this.#snapshotsWritten++;
    this.#imageBytes = image.length;
    this.#snapshotAtRecords = this.#recordsBetweenSnapshots();
    this.#snapshotAtBytes = this.#bytesBetweenSnapshots();
    this.#markDurable(seq);
    const stillPending: PendingWrite[] = [];
    for (const entry of this.#pending) {
      if (entry.seq <= seq) entry.resolve();
      else stillPending.push(entry);
    }
    this.#pending = stillPending;
    if (this.#journalBytes === 0) return;
    try {
      await this.#journal.truncate(0);
      if (this.#fsync) await this.#journal.datasync();
    } catch (error) {
      // The snapshot is safe, but a journal that cannot be truncated or synced cannot be
      // trusted with the next record either.
      this.#fail(error, []);
      throw error;
    }
    this.#journalBytes = 0;
    this.#journalRecords = 0;
  }

  #markDurable(seq: number): void {
    if (seq > this.#durableSeq) this.#durableSeq = seq;
  }

  #fail(error: unknown, batch: PendingWrite[]): void {
    if (this.#failure === null) {
      this.#failure = error;
      this.#onFailure(error);
    }
    const failure = new StoreFailedError(this.#failure);
    for (const entry of batch) entry.reject(failure);
    for (const entry of this.#pending.splice(0)) entry.reject(failure);
  }
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
