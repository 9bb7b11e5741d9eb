// A thin layer over one in-memory sql.js database: loading the WASM, a prepared-statement
// cache, and row-returning helpers. It knows nothing about durability; database.ts does.

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import initSqlJs from 'sql.js';
import type { Database as SqlJsDatabase, SqlJsStatic, SqlValue, Statement } from 'sql.js';
import type { SqlParams } from './journal.ts';

export type SqlRow = Record<string, SqlValue>;

/** Where the WASM ships inside the sql.js package; Electron overrides it with the unpacked copy. */
export function defaultWasmPath(): string {
  return createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
}

// One WASM instance serves every database of the process; instantiating costs 20–60 ms.
const engines = new Map<string, Promise<SqlJsStatic>>();

export function loadSqlJs(wasmPath: string): Promise<SqlJsStatic> {
  let engine = engines.get(wasmPath);
  if (!engine) {
    // Handing over the bytes keeps Emscripten from guessing how to fetch the file, which goes
    // wrong inside an asar archive and in bundles.
    engine = readFile(wasmPath).then((bytes) => {
      // Emscripten wants an ArrayBuffer of exactly the module; a Buffer may be a view into a pool.
      const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      return initSqlJs({ wasmBinary });
    });
    engine.catch(() => engines.delete(wasmPath));
    engines.set(wasmPath, engine);
  }
  return engine;
}

// Enough for every fixed statement of the repositories; dynamic SQL beyond it evicts the oldest.
const STATEMENT_CACHE_SIZE = 256;

export class SqliteConnection {
  readonly #db: SqlJsDatabase;
  readonly #statements = new Map<string, Statement>();

  constructor(db: SqlJsDatabase) {
    this.#db = db;
  }

  /** Runs one statement and returns how many rows it inserted, updated or deleted. */
  run(sql: string, params: SqlParams = []): number {
    const statement = this.#prepare(sql);
    try {
      statement.bind(params as SqlParams & SqlValue[]);
      while (statement.step()) {
        // Drain a RETURNING clause or a row-yielding PRAGMA; run() ignores the rows.
      }
    } finally {
      statement.reset();
    }
    return this.#db.getRowsModified();
  }

  get<Row = SqlRow>(sql: string, params: SqlParams = []): Row | undefined {
    const statement = this.#prepare(sql);
    try {
      statement.bind(params as SqlParams & SqlValue[]);
      return statement.step() ? (statement.getAsObject() as Row) : undefined;
    } finally {
      statement.reset();
    }
  }

  all<Row = SqlRow>(sql: string, params: SqlParams = []): Row[] {
    const statement = this.#prepare(sql);
    const rows: Row[] = [];
    try {
      statement.bind(params as SqlParams & SqlValue[]);
      while (statement.step()) rows.push(statement.getAsObject() as Row);
    } finally {
      statement.reset();
    }
    return rows;
  }

  /**
   * The database lives in memory and is made durable by our own journal and snapshots
   * (database.ts), not by SQLite's: its rollback journal is only needed to undo a failed write,
   * so it stays in memory too. With the default (a journal file in sql.js's emulated file system,
   * created, written and deleted on every commit) each write took about half again as long (a
   * store-level loop of session creates: 0.14 → 0.09 ms of main-thread time each). Called once
   * the image is known to be a database.
   *
   * And the lock on the database's emulated file is held for good (locking_mode EXCLUSIVE): this
   * connection is the file's only user. In the normal mode SQLite lets the lock go after every
   * transaction and, taking it again at the next statement, looks for a hot journal file that
   * never exists here (a path lookup in sql.js's file system that fails by throwing) and re-reads
   * the file's header; in a loop of a small write and a read that was three quarters of the CPU
   * (33–51 µs each against 8–11), and a fifth of the store thread's CPU per session start.
   * export() (a backup through this same connection) works as before.
   */
  keepRollbackJournalInMemory(): void {
    this.#db.exec('PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE');
  }

  /**
   * Opens and commits a write transaction through cached statements: exec() would parse and
   * prepare BEGIN and COMMIT again on every write (0.18 ms a write here, a profile of
   * POST /v1/sessions showed).
   */
  begin(): void {
    this.run('BEGIN');
  }

  commit(): void {
    this.run('COMMIT');
  }

  /** Runs a script of several statements (migrations); not cached. */
  exec(script: string): void {
    this.#db.exec(script);
  }

  /**
   * Ends the open transaction, if any. SQLite rolls some failed statements back by itself, and
   * a second ROLLBACK would then throw and hide the error that mattered.
   */
  rollbackQuietly(): void {
    try {
      this.#db.exec('ROLLBACK');
    } catch {
      // "cannot rollback - no transaction is active": nothing left to undo.
    }
  }

  /** The rows of `PRAGMA integrity_check`: exactly `['ok']` for a sound database. */
  integrityCheck(): string[] {
    return this.#db.exec('PRAGMA integrity_check').flatMap((result) => result.values.map((row) => String(row[0])));
  }

  /** The whole database as an SQLite file image. Throws inside an open write transaction. */
  export(): Uint8Array {
    return this.#db.export();
  }

  close(): void {
    for (const statement of this.#statements.values()) statement.free();
    this.#statements.clear();
    this.#db.close();
  }

  #prepare(sql: string): Statement {
    const cached = this.#statements.get(sql);
    if (cached) {
      // Re-insert so the map's order is least recently used first.
      this.#statements.delete(sql);
      this.#statements.set(sql, cached);
      return cached;
    }
    const statement = this.#db.prepare(sql);
    this.#statements.set(sql, statement);
    if (this.#statements.size > STATEMENT_CACHE_SIZE) {
      const [oldestSql, oldest] = this.#statements.entries().next().value as [string, Statement];
      oldest.free();
      this.#statements.delete(oldestSql);
    }
    return statement;
  }
}

export async function openConnection(wasmPath: string, image: Uint8Array | null): Promise<SqliteConnection> {
  const SQL = await loadSqlJs(wasmPath);
  return new SqliteConnection(new SQL.Database(image));
}
