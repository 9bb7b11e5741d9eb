// The PostgreSQL engine under the store (docs/hosting.md#several-nodes-on-postgresql): migrations
// applied once when two nodes start at once, refused when the database is newer; clear,
// password-free errors when the URL leads nowhere or to something that is not PostgreSQL; numbers
// that come back as numbers; transactions that roll back, and that are run again when PostgreSQL
// breaks a deadlock; LISTEN that survives its connection being cut; and a store that says it cannot
// write once its server is gone.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { StoreClosedError, StoreSchemaTooNewError, StoreUnreachableError } from '../../../server/store/errors.ts';
import { MIGRATIONS } from '../../../server/store/sqljs/migrations.ts';
import { openPostgres, prepared } from '../../../server/store/postgres/database.ts';
import type { PgDatabase } from '../../../server/store/postgres/database.ts';
import { PG_MIGRATIONS } from '../../../server/store/postgres/migrations.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { startPostgres } from '../../support/postgres.ts';
import { closeAfterTest, tempDataDir } from '../helpers.ts';
import { postgresNodesForThisFile } from './postgres-nodes.ts';

const nodes = postgresNodesForThisFile();

/** Polls until `check` passes or 20 s are gone (the machine may be busy). */
async function eventually(check: () => void | Promise<void>): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('migrations', () => {
  it('applies each migration once when two nodes open a new database at the same moment', async () => {
    const [a] = await nodes.twoNodes();
    const applied = await a.pg.rows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(applied.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    expect(PG_MIGRATIONS.map((migration) => migration.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
  });

  it('refuses a database whose schema is newer than this build knows, naming both versions', async () => {
    const url = await nodes.database();
    const db = closeAfterTest(await openPostgres({ url }));
    await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from the future', 0)");
    const refused = await openPostgres({ url }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreSchemaTooNewError);
    expect(String(refused)).toMatch(new RegExp(`schema version 99.*only up to ${PG_MIGRATIONS.at(-1)!.version}\\b`));
  });

  it('gives flows made before versions existed the same version 1 and document version as the embedded store does', async () => {
    const documents = [
      'id: a\nversion: "2.0"\nstates: {}\n',
      "id: b\nversion: '1.4' # reviewed\n",
      'version: 3 # note\nid: c\n',
      'id: d\n',
      'id: e\nversion:   \n',
      'id: f\n  version: 5\n',
      'id: g\r\nversion: 1.0\r\n',
    ];
    const before = <M extends { version: number }>(migrations: readonly M[]): M[] => migrations.filter((migration) => migration.version < 7);

    const url = await nodes.database();
    const early = await openPostgres({ url, migrations: before(PG_MIGRATIONS) });
    await early.run("INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('acc', 'a@example.com', 'h', 1)");
    for (const [i, yaml] of documents.entries()) {
      await early.run("INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES ($1, 'acc', $1, $2, 1, $3)", [`f${i}`, yaml, 10 + i]);
    }
    await early.close();
    const migrated = closeAfterTest(await openPostgres({ url }));
    const onPostgres = await migrated.rows('SELECT flow_id, number, document_version, created_at FROM flow_versions ORDER BY flow_id');

    const dataDir = await tempDataDir();
    const embeddedEarly = await openStore({ dataDir, migrations: before(MIGRATIONS) });
    await embeddedEarly.db.write((tx) => {
      tx.run("INSERT INTO accounts (id, email, password_hash, created_at) VALUES ('acc', 'a@example.com', 'h', 1)");
      for (const [i, yaml] of documents.entries()) {
        tx.run("INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, 'acc', ?, ?, 1, ?)", [`f${i}`, `f${i}`, yaml, 10 + i]);
      }
    });
    await embeddedEarly.close();
    const embedded = closeAfterTest(await openStore({ dataDir }));
    const onSqlJs = embedded.db.all('SELECT flow_id, number, document_version, created_at FROM flow_versions ORDER BY flow_id');

    expect(onPostgres).toEqual(onSqlJs);
    expect(onPostgres.map((row) => (row as { document_version: string | null }).document_version)).toEqual(['2.0', '1.4', '3', null, null, null, '1.0']);
  });
});

describe('opening', () => {
  it('says a URL with nothing listening cannot be reached, without its password', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address() as AddressInfo;
        server.close(() => resolve(free));
      });
    });
    const refused = await openPostgres({ url: `postgres://voxflow:hunter2-secret@127.0.0.1:${port}/voxflow` }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreUnreachableError);
    expect((refused as StoreUnreachableError).code).toBe('store_unreachable');
    expect(String(refused)).toContain(`postgres://voxflow:***@127.0.0.1:${port}/voxflow`);
    expect(String(refused)).not.toContain('hunter2-secret');
  });

  it('says a URL that leads to something other than PostgreSQL does not answer as PostgreSQL', async () => {
    const http = createServer((_request, response) => response.end('hello'));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = http.address() as AddressInfo;
      const refused = await openPostgres({ url: `postgres://voxflow:hunter2-secret@127.0.0.1:${port}/voxflow` }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreUnreachableError);
      expect(String(refused)).toMatch(/does not answer as a PostgreSQL server/);
      expect(String(refused)).not.toContain('hunter2-secret');
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  it('says the server refused when the database does not exist', async () => {
    const url = nodes.cluster().url.replace(/\/postgres$/, '/no_such_database');
    await expect(openPostgres({ url })).rejects.toThrow(/refused the connection.*no_such_database/);
  });
});

describe('queries and transactions', () => {
  it('reads BIGINT columns, counts and sums as numbers, leaving pg’s own parsers alone', async () => {
    const db = closeAfterTest(await openPostgres({ url: await nodes.database() }));
    expect(await db.row('SELECT 9007199254740991::bigint AS big, COUNT(*) AS n, SUM(x) AS total FROM (VALUES (1::bigint), (2::bigint)) AS t(x)')).toEqual({
      big: 9007199254740991,
      n: 2,
      total: 3,
    });
    expect(pg.types.getTypeParser(pg.types.builtins.INT8)('12')).toBe('12');
  });

  it('keeps nothing of a transaction whose work throws, and rethrows', async () => {
    const db = closeAfterTest(await openPostgres({ url: await nodes.database() }));
    await db.run('CREATE TABLE notes (id int PRIMARY KEY)');
    await expect(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO notes VALUES (1)');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await db.rows('SELECT * FROM notes')).toEqual([]);
    expect(await db.transaction(async (tx) => tx.run('INSERT INTO notes VALUES (1), (2)'))).toBe(2);
  });

  it('commits both of two transactions that deadlock: the one PostgreSQL aborts is run again', async () => {
    const url = await nodes.database();
    const [a, b] = [closeAfterTest(await openPostgres({ url })), closeAfterTest(await openPostgres({ url }))];
    await a.run('CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL)');
    await a.run('INSERT INTO counters VALUES (1, 0), (2, 0)');
    let runs = 0;
    const bothLocked = (() => {
      let arrived = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      return async () => {
        if (++arrived === 2) release();
        // A rerun does not wait for the other, which has by then committed or is waiting on us.
        if (arrived <= 2) await Promise.race([gate, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      };
    })();
    const bump = (db: PgDatabase, first: number, second: number) =>
      db.transaction(async (tx) => {
        runs++;
        await tx.run('UPDATE counters SET n = n + 1 WHERE id = $1', [first]);
        await bothLocked();
        await tx.run('UPDATE counters SET n = n + 1 WHERE id = $1', [second]);
      });
    await Promise.all([bump(a, 1, 2), bump(b, 2, 1)]);
    expect(await a.rows('SELECT id, n FROM counters ORDER BY id')).toEqual([
      { id: 1, n: 2 },
      { id: 2, n: 2 },
    ]);
    // At least one rerun; a rerun can itself deadlock again (it may lock its first row before the
    // survivor takes it), and then is run once more: what matters is each commits exactly once.
    expect(runs).toBeGreaterThanOrEqual(3);
  });

  it('answers each of many prepared reads sent at once with its own rows, and one that fails fails alone', async () => {
    // The hot reads share a few connections, pipelined: answers must not land on the wrong caller.
    const db = closeAfterTest(await openPostgres({ url: await nodes.database() }));
    const echo = prepared('SELECT $1::int AS n, 9007199254740991::bigint AS big');
    const divide = prepared('SELECT 10 / $1::int AS q');
    const reads = Array.from({ length: 60 }, (_, i) => (i === 30 ? db.row(divide, [0]) : db.row(echo, [i])));
    const settled = await Promise.allSettled(reads);
    settled.forEach((outcome, i) => {
      if (i === 30) expect(outcome).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
      else expect(outcome).toEqual({ status: 'fulfilled', value: { n: i, big: 9007199254740991 } });
    });
    expect(await db.row(divide, [5])).toEqual({ q: 2 });
  });

  it('refuses queries once closed', async () => {
    const db = await openPostgres({ url: await nodes.database() });
    await db.close();
    await db.close();
    expect(() => db.rows('SELECT 1')).toThrow(StoreClosedError);
  });
});

describe('listening across nodes', () => {
  it('hears another node’s notifications, and after its connection is cut hears "" and then the later ones', async () => {
    const url = await nodes.database();
    const [a, b] = [closeAfterTest(await openPostgres({ url })), closeAfterTest(await openPostgres({ url }))];
    const heard: string[] = [];
    const unlisten = await b.listen('voxflow_test_changes', (payload) => heard.push(payload));
    await a.notify('voxflow_test_changes', 'flow:1');
    await eventually(() => expect(heard).toEqual(['flow:1']));

    // This database's only: the cluster is shared with files running beside this one.
    await a.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'voxflow-listen' AND datname = current_database()");
    await eventually(() => expect(heard).toEqual(['flow:1', '']));
    await a.notify('voxflow_test_changes', 'flow:2');
    await eventually(() => expect(heard).toEqual(['flow:1', '', 'flow:2']));

    await unlisten();
    await a.notify('voxflow_test_changes', 'flow:3');
    await a.notify('voxflow_test_other', 'x');
    const fence: string[] = [];
    await b.listen('voxflow_test_other', (payload) => fence.push(payload));
    await a.notify('voxflow_test_other', 'after');
    await eventually(() => expect(fence).toEqual(['after']));
    expect(heard).toEqual(['flow:1', '', 'flow:2']);
  });
});

describe('losing the server', () => {
  it("a transaction whose connection is cut between its statements fails with StoreUnreachableError, and the process hears no stray 'error'", async () => {
    const url = await nodes.database();
    const db = closeAfterTest(await openPostgres({ url, poolSize: 2 }));
    const admin = closeAfterTest(await openPostgres({ url, poolSize: 1 }));
    const stray: unknown[] = [];
    const onStray = (error: unknown) => stray.push(error);
    process.on('uncaughtException', onStray);
    try {
      let cut!: () => void;
      const wasCut = new Promise<void>((resolve) => (cut = resolve));
      const failed = db.transaction(async (tx) => {
        const { pid } = (await tx.row<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!;
        await admin.run('SELECT pg_terminate_backend($1)', [pid]);
        // The client learns of it while no statement of it is running.
        await new Promise((resolve) => setTimeout(resolve, 300));
        cut();
        return tx.row('SELECT 1');
      });
      await expect(failed).rejects.toThrow(StoreUnreachableError);
      await wasCut;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(stray).toEqual([]);
      // The pool goes on with fresh connections.
      expect(await db.transaction((tx) => tx.row<{ one: number }>('SELECT 1 AS one'))).toEqual({ one: 1 });
    } finally {
      process.off('uncaughtException', onStray);
    }
  });

  it("prepared reads whose shared connections are cut fail with StoreUnreachableError, the next ones are answered, and the process hears no stray 'error'", async () => {
    const url = await nodes.database();
    const db = closeAfterTest(await openPostgres({ url }));
    const admin = closeAfterTest(await openPostgres({ url, poolSize: 1 }));
    const stray: unknown[] = [];
    const onStray = (error: unknown) => stray.push(error);
    process.on('uncaughtException', onStray);
    try {
      const slow = prepared('SELECT pg_sleep($1::float8) AS slept');
      // One in each turn: the reads of one turn go out together on one of the shared connections.
      const first = db.row(slow, [5]);
      await new Promise((resolve) => setImmediate(resolve));
      const inFlight = [first, db.row(slow, [5])];
      inFlight.forEach((read) => read.catch(() => undefined));
      await eventually(async () =>
        expect((await admin.row<{ n: number }>("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = 'voxflow-reads' AND datname = current_database() AND state = 'active'"))?.n).toBe(2),
      );
      await admin.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'voxflow-reads' AND datname = current_database()");
      for (const read of inFlight) await expect(read).rejects.toThrow(StoreUnreachableError);
      const echo = prepared('SELECT $1::int AS n');
      await eventually(async () => expect(await Promise.all([db.row(echo, [1]), db.row(echo, [2])])).toEqual([{ n: 1 }, { n: 2 }]));
      expect(db.writable()).toBe(true);
      expect(stray).toEqual([]);
    } finally {
      process.off('uncaughtException', onStray);
    }
  });

  it('says it cannot write once its PostgreSQL is gone, and its queries fail', async () => {
    const own = await startPostgres();
    let db: PgDatabase | undefined;
    try {
      db = await openPostgres({ url: await own.createDatabase('voxflow_lost'), poolSize: 2 });
      expect(db.writable()).toBe(true);
      await own.stop();
      await expect(db.rows('SELECT 1')).rejects.toThrow();
      expect(db.writable()).toBe(false);
    } finally {
      await db?.close().catch(() => undefined);
      await own.stop();
    }
  }, 120_000);
});
