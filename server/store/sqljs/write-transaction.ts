// One `db.write` callback's transaction: it runs the callback inside BEGIN/COMMIT and records
// the statements that changed something, which become the journal record.

import type { RecordedStatement, SqlParam, SqlParams } from './journal.ts';
import type { SqliteConnection, SqlRow } from './sqlite-connection.ts';

/** The statements of one `write` callback; valid only while the callback runs. */
export interface WriteTransaction {
  /** Runs a statement and returns how many rows it inserted, updated or deleted. */
  run(sql: string, params?: SqlParams): number;
  get<Row = SqlRow>(sql: string, params?: SqlParams): Row | undefined;
  all<Row = SqlRow>(sql: string, params?: SqlParams): Row[];
}

// The SQLite spellings of "now" and "random"; not a parser, a guard against the obvious.
const NONDETERMINISTIC_SQL = /\b(random|randomblob|current_date|current_time|current_timestamp)\b|['"]now['"]/i;
const READ_ONLY_SQL = /^\s*select\b/i;
const PLAIN_DML_SQL = /^\s*(insert|update|delete|replace)\b/i;

/**
 * Runs `fn` in a transaction on `conn` and returns its result with the statements to journal.
 * If `fn` throws (or returns a promise), the transaction is rolled back and the error rethrown.
 */
export function runRecordedTransaction<T>(
  conn: SqliteConnection,
  fn: (tx: WriteTransaction) => T,
): { result: T; statements: RecordedStatement[] } {
  const statements: RecordedStatement[] = [];
  let open = true;
  const prepare = (sql: string, params: SqlParams): boolean => {
    if (!open) throw new Error('A write transaction was used after its callback returned');
    validateParams(params);
    const mutating = !READ_ONLY_SQL.test(sql);
    if (mutating && NONDETERMINISTIC_SQL.test(sql)) {
      throw new Error(`Journaled statements must be deterministic; pass times and random values as parameters: ${sql}`);
    }
    return mutating;
  };
  const record = (sql: string, params: SqlParams): void => {
    statements.push({ sql, params: Array.isArray(params) ? [...(params as readonly SqlParam[])] : { ...params } });
  };
  const tx: WriteTransaction = {
    run(sql: string, params: SqlParams = []): number {
      const mutating = prepare(sql, params);
      const changes = conn.run(sql, params);
      // A plain INSERT/UPDATE/DELETE that touched no row had no effect; replay can skip it.
      if (mutating && !(PLAIN_DML_SQL.test(sql) && changes === 0)) record(sql, params);
      return changes;
    },
    get<Row = SqlRow>(sql: string, params: SqlParams = []): Row | undefined {
      const mutating = prepare(sql, params);
      const row = conn.get<Row>(sql, params);
      if (mutating) record(sql, params); // e.g. INSERT ... RETURNING
      return row;
    },
    all<Row = SqlRow>(sql: string, params: SqlParams = []): Row[] {
      const mutating = prepare(sql, params);
      const rows = conn.all<Row>(sql, params);
      if (mutating) record(sql, params);
      return rows;
    },
  };

  conn.begin();
  try {
    const result = fn(tx);
    if (isPromiseLike(result)) {
      result.then(undefined, () => {}); // its outcome no longer matters; keep it from going unhandled
      throw new TypeError('A db.write callback must be synchronous; it returned a promise');
    }
    conn.commit();
    return { result, statements };
  } catch (error) {
    conn.rollbackQuietly();
    throw error;
  } finally {
    open = false;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function validateParams(params: SqlParams): void {
  const values: readonly unknown[] = Array.isArray(params) ? params : Object.values(params);
  for (const value of values) {
    const ok = value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
    // Anything else (undefined, NaN, a Buffer, a boolean) would not replay as it was bound.
    if (!ok) throw new TypeError(`A journaled parameter must be a string, a finite number or null; got ${String(value)}`);
  }
}
