// Over 400 lines, one idea: the connection's whole life (pool, the shared pipelined connections
// of the hot reads, checked-out clients and their error listeners, retries, which failures mean the database is unreachable) is kept together,
// since each part's correctness depends on the others (a cut connection is seen by all of them).
//
// The PostgreSQL engine under the store for several nodes (docs/hosting.md): a `pg` pool with its own
// type parsers, transactions on one pooled client with retries on serialization failures and
// deadlocks, LISTEN/NOTIFY for invalidating caches across nodes, and the migrations applied at
// open under an advisory lock so two nodes starting at once do not race.
//
// Unlike the sql.js store, every read is a round trip and another node may write between two of
// them: a repository that checks then writes does both in one statement or in `transaction` with
// a row lock, never as two separate calls.

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { ApiKeyRefusedError, StoreClosedError, StoreSchemaTooNewError, StoreUnreachableError } from '../errors.ts';
import type { KeyCheckWithFirstRead } from '../repositories/api-keys.ts';
import { PG_MIGRATIONS } from './migrations.ts';
import type { PgMigration } from './migrations.ts';

export type { PgMigration } from './migrations.ts';

/**
 * A statement's text, or a statement PostgreSQL parses and plans once per connection and then only
 * executes (`prepared()`): for the statements every request sends.
 */
export type Sql = string | PreparedStatement;

export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** A named (prepared) statement; its name is taken from its text, so two texts never share one. */
export function prepared(text: string): PreparedStatement {
  return { name: `vf_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
}

export interface PgQueryable {
  rows<T>(sql: Sql, params?: unknown[]): Promise<T[]>;
  /** The first row, or null. */
  row<T>(sql: Sql, params?: unknown[]): Promise<T | null>;
  /** How many rows the statement touched. */
  run(sql: Sql, params?: unknown[]): Promise<number>;
}

/** An API key a request presented, not yet known to be active (see `PgDatabase.checkingKey`). */
export type PendingKeyCheck = KeyCheckWithFirstRead;

export interface PgDatabase extends PgQueryable {
  readonly pool: pg.Pool;
  /** Unix seconds, fractional; injectable like the sql.js store's `now` option. */
  now(): number;
  /**
   * BEGIN … COMMIT on one pooled client; ROLLBACK and rethrow on error. Retried (up to 5 times in
   * all) on serialization failure or deadlock (40001, 40P01), so `fn` may run more than once and
   * must not have effects outside the transaction.
   */
  transaction<T>(fn: (tx: PgQueryable) => Promise<T>): Promise<T>;
  /**
   * LISTEN on a dedicated client; returns an unsubscribe. When that client's connection drops it
   * reconnects and listens again, then calls every handler once with an empty payload, since
   * notifications sent meanwhile are lost: a cache must read '' as "forget everything".
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * A key check that rides on the next read: inside `run`, the first SELECT sent outside a
   * transaction returns its rows only if the key (by its hash) is active at that statement, so
   * the check and the read are one round trip. Rows back prove the key active; no rows, and the
   * key is checked alone (an empty answer cannot tell "nothing there" from "key refused"). Any
   * other statement (a write, a transaction) waits for the check first, so nothing is written for
   * a refused key. Nothing is remembered between requests: a key revoked on another node is
   * refused by the next statement that checks it.
   */
  checkingKey(keyHash: string): PendingKeyCheck;
  /** False while the database cannot be reached (the last query failed with a connection error). */
  writable(): boolean;
  close(): Promise<void>;
}

export interface OpenPostgresOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  now?: () => number;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  migrations?: readonly PgMigration[];
}

/** pg_advisory_lock key held while migrating: any constant, the same on every node ("voxflow1"). */
const MIGRATION_LOCK_KEY = 0x766f78666c6f7731n;
const TRANSACTION_ATTEMPTS = 5;
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
const LISTEN_RECONNECT_MS = 1000;

/**
 * int8 (COUNT, BIGINT columns) and numeric (SUM of BIGINT) come back from pg as strings, since
 * they may exceed 2^53. Every such value here is cents, counts or seconds, far below that, so this
 * pool (only this one: pg's global parsers stay as they are) parses them as numbers.
 */
const NUMBER_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) {
      return (value: string) => Number(value);
    }
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** The URL with its password replaced by ***, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable database URL)';
  }
}

/** A unique-constraint violation (a racing insert lost), for mapping to the store's own errors. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * A connection-level failure as the store's own error: the API answers it 503 store_unavailable
 * with Retry-After (PostgreSQL restarting, a failover, the network), not 500; anything else is
 * left as it is.
 */
function asStoreError(error: unknown, shownUrl: string): unknown {
  if (!isConnectionError(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnreachableError(shownUrl, `the connection failed (${reason})`, { cause: error });
}

/** Errors that say the server is gone, not that the statement was wrong. */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  if (typeof code !== 'string') {
    // pg throws plain Errors when a connection ends under a query.
    const message = error instanceof Error ? error.message : '';
    return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message);
  }
  return (
    code.startsWith('08') || // connection_exception
    code === '57P01' || // admin_shutdown
    code === '57P02' || // crash_shutdown
    code === '57P03' || // cannot_connect_now
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN'].includes(code)
  );
}

/** A pooled client taken out of the pool, until given back with `giveBack`. */
interface CheckedOut {
  client: pg.PoolClient;
  /** Back to the pool; destroyed instead when asked, or when its connection failed while out. */
  giveBack(destroy?: boolean): void;
}

/**
 * A client out of the pool has no listener of the pool's: its connection cut (PostgreSQL
 * restarting, pg_terminate_backend) would be an 'error' nobody hears, which ends the process. The
 * listener is added in pg's own callback, not after an await: a connection cut right after it
 * opened may say so in the very read that finished opening it. The failure reaches the
 * statement waiting on the client anyway.
 */
function checkOut(pool: pg.Pool): Promise<CheckedOut> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || !client) return reject(error ?? new Error('the pool gave no client'));
      let lost = false;
      const onLost = () => {
        lost = true;
      };
      client.on('error', onLost);
      resolve({
        client,
        giveBack(destroy = false) {
          client.off('error', onLost);
          client.release(destroy || lost || undefined);
        },
      });
    });
  });
}

function send(client: pg.Pool | pg.PoolClient, sql: Sql, params?: unknown[]): Promise<pg.QueryResult> {
  return typeof sql === 'string' ? client.query(sql, params) : client.query({ name: sql.name, text: sql.text, values: params ?? [] });
}

function queryable(client: pg.Pool | pg.PoolClient, track: <T>(work: Promise<T>) => Promise<T>): PgQueryable {
  return {
    async rows<T>(sql: Sql, params?: unknown[]) {
      return (await track(send(client, sql, params))).rows as T[];
    },
    async row<T>(sql: Sql, params?: unknown[]) {
      return ((await track(send(client, sql, params))).rows[0] as T | undefined) ?? null;
    },
    async run(sql: Sql, params?: unknown[]) {
      return (await track(send(client, sql, params))).rowCount ?? 0;
    },
  };
}

/** Connections the hot reads share (see `PipelinedReads`). */
const PIPELINED_CONNECTIONS = 2;

/**
 * The prepared plain SELECTs that every request sends (the flow list with the API key's check in
 * it, a session start's four reads, the key alone) go out pipelined on a few connections shared
 * by every request, instead of each taking a pooled connection of its own: a statement written
 * while others are still being answered does not wait for them, and a backend that wakes up
 * answers every statement waiting on its connection in one turn, where ten pooled connections
 * woke ten backends in turn (each a process switch on the node's cores). Each statement carries
 * its own Sync, so it is its own implicit transaction: an error fails that statement alone.
 * Writes stay on the pool: autocommit writes pipelined on one connection would wait for each
 * other's commit flush, where on separate connections PostgreSQL flushes them together.
 * Only prepared statements ride here (short indexed reads); a long ad-hoc read (analytics) would
 * hold up every statement behind it on the shared connection.
 */
class PipelinedReads {
  private readonly clients: Array<Promise<pg.Client> | undefined> = [];
  private next = 0;
  private closed = false;
  /** The connection this turn's statements go out on, until the turn's end sends them (see query). */
  private batch: Promise<pg.Client> | undefined;

  constructor(private readonly config: pg.ClientConfig) {}

  /**
   * The statements sent in one turn of the event loop go out on one connection in one socket
   * write: the connection's socket is corked at the turn's first statement and uncorked once the
   * turn's I/O callbacks have run (setImmediate), so a session start's four reads, and the reads
   * of every request taken in that turn, leave together (pg corks each statement's own messages
   * the same way; the corks nest). One write wakes one backend, which answers all of them in one
   * turn, where a write per statement, spread over both connections, cost the node a system call
   * each and woke both backends: socket writes were two fifths of the server's CPU per session
   * start in the profile of eight writers, these reads half of that.
   */
  async query(sql: PreparedStatement, params: unknown[] | undefined): Promise<pg.QueryResult> {
    const client = await (this.batch ??= this.startBatch());
    // The statement's name and text inherited, not own fields: pg copies a query's config with
    // its property descriptors, and one field costs that copy half what three do (0.7 of 1.4 µs).
    const config = Object.create(sql) as pg.QueryConfig;
    config.values = params ?? [];
    return client.query(config);
  }

  private startBatch(): Promise<pg.Client> {
    let open = true;
    const batch = this.client().then((client) => {
      // Corked only once open (a connection still opening sends nothing yet, and pg sends what
      // was queued on it when it opens), and only while the turn lasts.
      const socket = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
      if (open && socket?.cork && socket.uncork) {
        socket.cork();
        setImmediate(() => socket.uncork!());
      }
      return client;
    });
    setImmediate(() => {
      open = false;
      if (this.batch === batch) this.batch = undefined;
    });
    return batch;
  }

  /** Opens every shared connection now, so the first requests do not wait for a backend to start. */
  async open(): Promise<void> {
    await Promise.all(Array.from({ length: PIPELINED_CONNECTIONS }, () => this.client()));
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = this.clients.splice(0);
    await Promise.all(open.map(async (connecting) => (await connecting?.catch(() => undefined))?.end().catch(() => undefined)));
  }

  /** The next shared connection in turn, opened (again) when it is not open. */
  private client(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const slot = this.next;
    this.next = (this.next + 1) % PIPELINED_CONNECTIONS;
    let connecting = this.clients[slot];
    if (connecting === undefined) {
      const client = new pg.Client({ ...this.config, pipeline: true });
      // A connection cut (PostgreSQL restarting, pg_terminate_backend) fails the statements on
      // it (pg errors them all) and empties the slot, so the next statement opens a new one.
      const forget = () => {
        if (this.clients[slot] === connecting) this.clients[slot] = undefined;
      };
      client.on('error', forget);
      client.on('end', forget);
      connecting = client.connect().then(
        () => client,
        (error: unknown) => {
          forget();
          throw error;
        },
      );
      this.clients[slot] = connecting;
    }
    return connecting;
  }
}

const KEY_ACTIVE = prepared('SELECT 1 AS active FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL');

/** A read that may carry a key check: a single SELECT (a WITH may hold a write, and cannot nest). */
const isPlainSelect = (text: string) => /^\s*SELECT\b/i.test(text);

/**
 * `sql` returning its rows only while the key with hash $n+1 is active: the uncorrelated EXISTS
 * is a one-time filter PostgreSQL evaluates before the read (it reads nothing for a refused key),
 * and a subquery's rows come out in its own ORDER BY under it.
 */
function withKeyCheck(sql: Sql, paramCount: number): Sql {
  if (typeof sql !== 'string') {
    // A prepared statement's guarded form is made once (its name is a hash of its text).
    const key = `${sql.name}/${paramCount}`;
    let guarded = GUARDED.get(key);
    if (guarded === undefined) GUARDED.set(key, (guarded = prepared(guardedText(sql.text, paramCount))));
    return guarded;
  }
  return guardedText(sql, paramCount);
}

const guardedText = (text: string, paramCount: number) => `SELECT checked.* FROM (${text.trim().replace(/;$/, '')}) checked
    WHERE EXISTS (SELECT 1 FROM api_keys WHERE key_hash = $${paramCount + 1} AND revoked_at IS NULL)`;

/** The guarded forms of the prepared statements, by name and parameter count: a fixed set, as the statements are. */
const GUARDED = new Map<string, PreparedStatement>();

/** One request's pending key check, shared by the statements the request sends. */
class KeyCheck implements PendingKeyCheck {
  /** 'active' once any statement saw the key active; after that, statements go as they are. */
  state: 'pending' | 'active' | 'refused' = 'pending';
  /** Reads carrying the check, still waiting for their answers. */
  readonly riding = new Set<Promise<unknown>>();
  private alone: Promise<void> | undefined;

  constructor(
    readonly keyHash: string,
    private readonly storage: AsyncLocalStorage<KeyCheck>,
    private readonly checkAlone: (keyHash: string) => Promise<boolean>,
  ) {}

  confirm(): Promise<void> {
    if (this.state === 'active') return Promise.resolve();
    if (this.state === 'refused') return Promise.reject(new ApiKeyRefusedError());
    this.alone ??= this.checkAlone(this.keyHash).then(
      (active) => {
        if (this.state === 'pending') this.state = active ? 'active' : 'refused';
        if (this.state === 'refused') throw new ApiKeyRefusedError();
      },
      (error: unknown) => {
        // A failed check decides nothing: the next one asks again.
        this.alone = undefined;
        throw error;
      },
    );
    return this.alone;
  }

  run<T>(fn: () => T): T {
    return this.storage.run(this, fn);
  }
}

export async function openPostgres(options: OpenPostgresOptions): Promise<PgDatabase> {
  const shownUrl = redactDatabaseUrl(options.url);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    // Connections kept open while idle (pg closes the rest after 10 s idle): opening one starts a
    // PostgreSQL backend process, 5.5 ms p50 on the development machine against 0.34 ms for a
    // query on an open one. The hot reads have connections of their own (PipelinedReads); the
    // pool serves writes and transactions, and four cover a small burst of them after a quiet spell.
    min: Math.min(4, options.poolSize ?? 10),
    types: NUMBER_TYPES,
    connectionTimeoutMillis: 10_000,
    application_name: 'voxflow',
  });
  let reachable = true;
  // An idle pooled client whose server went away emits 'error' on the pool; unhandled, it would
  // end the process. The next query reconnects; until then the store says it is not writable.
  pool.on('error', () => {
    reachable = false;
  });
  try {
    await checkIsPostgres(pool, shownUrl);
    await migrate(pool, options.migrations ?? PG_MIGRATIONS, shownUrl);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  const reads = new PipelinedReads({
    connectionString: options.url,
    types: NUMBER_TYPES,
    connectionTimeoutMillis: 10_000,
    application_name: 'voxflow-reads',
  });
  try {
    await reads.open();
  } catch (error) {
    await reads.close();
    await pool.end().catch(() => undefined);
    throw asStoreError(error, shownUrl);
  }
  return new PostgresDatabase(pool, reads, options, shownUrl, (value) => (reachable = value), () => reachable);
}

async function checkIsPostgres(pool: pg.Pool, shownUrl: string): Promise<void> {
  let version: string;
  try {
    const { rows } = await pool.query<{ version: string }>('SELECT version() AS version');
    version = String(rows[0]?.version ?? '');
  } catch (error) {
    const code = (error as { code?: string }).code;
    const reason = error instanceof Error ? error.message : String(error);
    if (code !== undefined && /^E[A-Z]+$/.test(code)) {
      throw new StoreUnreachableError(shownUrl, `no server could be reached there (${reason})`, { cause: error });
    }
    if (isConnectionError(error) || code === undefined) {
      throw new StoreUnreachableError(shownUrl, `it does not answer as a PostgreSQL server (${reason})`, { cause: error });
    }
    // The server answered but refused us: a wrong password, a missing database, no permission.
    throw new StoreUnreachableError(shownUrl, `the server refused the connection (${reason})`, { cause: error });
  }
  if (!version.startsWith('PostgreSQL')) {
    throw new StoreUnreachableError(shownUrl, `the server is not PostgreSQL (it says "${version.slice(0, 80)}")`);
  }
}

/**
 * Applies the migrations this database has not seen, each in its own transaction, while holding
 * a session advisory lock: a second node starting at the same moment waits, then finds them applied.
 */
async function migrate(pool: pg.Pool, migrations: readonly PgMigration[], shownUrl: string): Promise<void> {
  const out = await checkOut(pool);
  const client = out.client;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    BIGINT PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at DOUBLE PRECISION NOT NULL
      )`);
      const { rows } = await client.query<{ version: string }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((row) => Number(row.version)));
      const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
      const newest = Math.max(0, ...applied);
      if (newest > known) throw new StoreSchemaTooNewError(shownUrl, newest, known);
      for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
        if (applied.has(migration.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            migration.version,
            migration.name,
            Date.now() / 1000,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => undefined);
    }
  } finally {
    out.giveBack();
  }
}

class PostgresDatabase implements PgDatabase {
  readonly pool: pg.Pool;
  private readonly clock: () => number;
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private listenClient: pg.Client | undefined;
  private listenConnecting: Promise<pg.Client> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly direct: PgQueryable;
  private readonly keyChecks = new AsyncLocalStorage<KeyCheck>();

  constructor(
    pool: pg.Pool,
    private readonly reads: PipelinedReads,
    private readonly options: OpenPostgresOptions,
    private readonly shownUrl: string,
    private readonly setReachable: (value: boolean) => void,
    private readonly reachable: () => boolean,
  ) {
    this.pool = pool;
    this.clock = options.now ?? (() => Date.now() / 1000);
    const track = <T>(work: Promise<T>) => this.track(work);
    const pooled = queryable(pool, track);
    const pipelined = (sql: Sql): sql is PreparedStatement => typeof sql !== 'string' && isPlainSelect(sql.text);
    this.direct = {
      rows: async <T>(sql: Sql, params?: unknown[]) => (pipelined(sql) ? ((await track(reads.query(sql, params))).rows as T[]) : pooled.rows<T>(sql, params)),
      row: async <T>(sql: Sql, params?: unknown[]) =>
        pipelined(sql) ? (((await track(reads.query(sql, params))).rows[0] as T | undefined) ?? null) : pooled.row<T>(sql, params),
      run: (sql: Sql, params?: unknown[]) => pooled.run(sql, params),
    };
  }

  now(): number {
    return this.clock();
  }

  writable(): boolean {
    return !this.closed && this.reachable();
  }

  checkingKey(keyHash: string): PendingKeyCheck {
    return new KeyCheck(keyHash, this.keyChecks, async (hash) => (await this.direct.row(KEY_ACTIVE, [hash])) !== null);
  }

  // rows, row and run throw StoreClosedError at once (not as a rejection), as they always have.
  rows<T>(sql: Sql, params?: unknown[]): Promise<T[]> {
    this.assertOpen();
    return this.rowsChecked<T>(sql, params);
  }

  row<T>(sql: Sql, params?: unknown[]): Promise<T | null> {
    this.assertOpen();
    return this.rowsChecked<T>(sql, params).then((rows) => rows[0] ?? null);
  }

  run(sql: Sql, params?: unknown[]): Promise<number> {
    this.assertOpen();
    const check = this.keyChecks.getStore();
    if (check === undefined || check.state === 'active') return this.direct.run(sql, params);
    return check.confirm().then(() => this.direct.run(sql, params));
  }

  /** A statement's rows, carrying the request's pending key check when it is a plain SELECT (checkingKey). */
  private async rowsChecked<T>(sql: Sql, params?: unknown[]): Promise<T[]> {
    const check = this.keyChecks.getStore();
    if (check === undefined || check.state === 'active') return this.direct.rows<T>(sql, params);
    if (check.state === 'refused' || !isPlainSelect(typeof sql === 'string' ? sql : sql.text)) {
      await check.confirm();
      return this.direct.rows<T>(sql, params);
    }
    const values = params ?? [];
    const read = this.direct.rows<T>(withKeyCheck(sql, values.length), [...values, check.keyHash]);
    check.riding.add(read);
    let rows: T[];
    try {
      rows = await read;
    } finally {
      check.riding.delete(read);
    }
    if (rows.length > 0) {
      check.state = 'active';
      return rows;
    }
    // Reads sent at once with this one may yet prove the key active, sparing the check alone.
    await Promise.allSettled([...check.riding]);
    await check.confirm();
    return rows;
  }

  async transaction<T>(fn: (tx: PgQueryable) => Promise<T>): Promise<T> {
    this.assertOpen();
    const check = this.keyChecks.getStore();
    if (check !== undefined && check.state !== 'active') await check.confirm();
    for (let attempt = 1; ; attempt++) {
      const out = await this.track(checkOut(this.pool));
      const client = out.client;
      let broken = false;
      try {
        const tx = queryable(client, (work) => this.track(work));
        await this.track(client.query('BEGIN'));
        const result = await fn(tx);
        await this.track(client.query('COMMIT'));
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        const sqlstate = (error as { code?: string }).code;
        if (attempt < TRANSACTION_ATTEMPTS && sqlstate !== undefined && RETRYABLE_SQLSTATES.has(sqlstate)) continue;
        throw error;
      } finally {
        // A client whose ROLLBACK failed may be mid-transaction: destroy it rather than pool it.
        out.giveBack(broken);
      }
    }
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    this.assertOpen();
    let handlers = this.listeners.get(channel);
    const first = handlers === undefined;
    if (!handlers) {
      handlers = new Set();
      this.listeners.set(channel, handlers);
    }
    handlers.add(onPayload);
    if (first) {
      try {
        const client = await this.listeningClient();
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      } catch (error) {
        // Not listening: a handler left registered would wait for what never comes.
        this.listeners.delete(channel);
        throw error;
      }
    }
    return async () => {
      const set = this.listeners.get(channel);
      if (!set?.delete(onPayload) || set.size > 0) return;
      this.listeners.delete(channel);
      if (this.listenClient && !this.closed) {
        await this.listenClient.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
      }
    };
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.run('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const listening = this.listenClient;
    this.listenClient = undefined;
    await listening?.end().catch(() => undefined);
    await this.reads.close();
    await this.pool.end();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /**
   * Keeps `writable()` true while queries succeed and false after one fails for want of a
   * connection, and turns such a failure into a StoreUnreachableError (the API's 503).
   */
  private async track<T>(work: Promise<T>): Promise<T> {
    try {
      const result = await work;
      this.setReachable(true);
      return result;
    } catch (error) {
      if (isConnectionError(error)) this.setReachable(false);
      throw asStoreError(error, this.shownUrl);
    }
  }

  /** The one client that holds every LISTEN of this node; made on first use, remade when lost. */
  private listeningClient(): Promise<pg.Client> {
    if (this.listenClient) return Promise.resolve(this.listenClient);
    this.listenConnecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.options.url, application_name: 'voxflow-listen' });
      client.on('notification', (message) => {
        for (const handler of this.listeners.get(message.channel) ?? []) handler(message.payload ?? '');
      });
      client.on('error', () => this.listenerLost(client));
      client.on('end', () => this.listenerLost(client));
      try {
        await client.connect();
      } catch (error) {
        if (isConnectionError(error)) this.setReachable(false);
        throw new StoreUnreachableError(this.shownUrl, `cannot open the connection that listens for other nodes' changes (${(error as Error).message})`, {
          cause: error,
        });
      }
      this.listenClient = client;
      return client;
    })().finally(() => {
      this.listenConnecting = undefined;
    });
    return this.listenConnecting;
  }

  /**
   * The listening connection dropped: notifications sent meanwhile are lost, so once it is back
   * every handler hears an empty payload, which caches read as "forget everything you hold".
   */
  private listenerLost(client: pg.Client): void {
    if (this.listenClient !== client) return;
    this.listenClient = undefined;
    client.end().catch(() => undefined);
    if (this.closed || this.listeners.size === 0) return;
    this.setReachable(false);
    const retry = (): void => {
      this.reconnectTimer = undefined;
      if (this.closed || this.listeners.size === 0) return;
      this.listeningClient()
        .then(async (fresh) => {
          for (const channel of this.listeners.keys()) await fresh.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
          for (const handlers of this.listeners.values()) for (const handler of handlers) handler('');
        })
        .catch(() => {
          if (!this.closed) this.reconnectTimer = setTimeout(retry, LISTEN_RECONNECT_MS);
        });
    };
    this.reconnectTimer = setTimeout(retry, LISTEN_RECONNECT_MS);
  }
}
