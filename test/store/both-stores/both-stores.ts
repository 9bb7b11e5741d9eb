// The repository tests run against both stores (docs/hosting.md#several-nodes-on-postgresql): the
// embedded sql.js store and PostgreSQL. `describeEachStore(name, body)` registers `body` twice,
// once per store; the `open()` it hands the body gives a fresh, empty, migrated store of that kind
// for one test, closed after it.
//
// PostgreSQL: the integration project's one cluster (test/support/shared-postgres.ts), a database
// migrated once there as a template, and a new database per open() copied from it with CREATE
// DATABASE … TEMPLATE, which takes milliseconds where running the migrations would take far
// longer. Every database has a name of its own, so files running at once never share one.
import { describe } from 'vitest';
import { openPostgresStore } from '../../../server/store/postgres/store.ts';
import type { PostgresStore } from '../../../server/store/postgres/store.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import type { Store } from '../../../server/store/store.ts';
import type { EmbeddedStore } from '../../../server/store/sqljs/store.ts';
import { sharedPostgresForThisFile } from '../../support/shared-postgres.ts';
import { closeAfterTest, tempDataDir } from '../helpers.ts';

export type StoreKind = 'sqljs' | 'postgres';

export interface OpenTestStoreOptions {
  /** Unix seconds, fractional: the store's clock, as openStore's `now` option. */
  now?: () => number;
}

/** A fresh store for one test, with the few probes a test needs below the repositories. */
export interface StoreUnderTest {
  store: Store;
  kind: StoreKind;
  /** Rows of a read-only SQL query written with `?` placeholders (turned into $1… on PostgreSQL). */
  rows<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * A number that stays the same while the store writes nothing and grows with every insert or
   * update: sql.js counts journaled writes; PostgreSQL gives the transaction id of the newest row
   * version in the store's database (a read-only statement writes none).
   */
  writeMark(): Promise<number>;
}

export type OpenTestStore = (options?: OpenTestStoreOptions) => Promise<StoreUnderTest>;

const KIND_NAMES: Record<StoreKind, string> = { sqljs: 'sql.js', postgres: 'PostgreSQL' };

export function describeEachStore(name: string, body: (open: OpenTestStore, kind: StoreKind) => void): void {
  describe(`${name} [${KIND_NAMES.sqljs}]`, () => {
    body(openEmbedded, 'sqljs');
  });
  describe(`${name} [${KIND_NAMES.postgres}]`, () => {
    const server = postgresForTests();
    body((options) => server.open(options), 'postgres');
  });
}

async function openEmbedded(options: OpenTestStoreOptions = {}): Promise<StoreUnderTest> {
  const store: EmbeddedStore = closeAfterTest(await openStore({ dataDir: await tempDataDir(), ...(options.now ? { now: options.now } : {}) }));
  return {
    store,
    kind: 'sqljs',
    rows: async <T>(sql: string, params: unknown[] = []) => store.db.all(sql, params as never) as T[],
    writeMark: async () => store.db.stats().lastSeq,
  };
}

/** Registers the file's databases on the shared cluster; open() is valid inside its tests. */
function postgresForTests(): { open(options?: OpenTestStoreOptions): Promise<StoreUnderTest> } {
  const cluster = sharedPostgresForThisFile();
  return {
    async open(options = {}) {
      const url = await cluster.createDatabase('voxflow_store', { migrated: true });
      const store: PostgresStore = closeAfterTest(await openPostgresStore({ url, poolSize: 4, ...(options.now ? { now: options.now } : {}) }));
      return {
        store,
        kind: 'postgres',
        rows: <T>(sql: string, params: unknown[] = []) => store.pg.rows<T>(numberedPlaceholders(sql), params),
        async writeMark() {
          // The newest row version of this database: transaction ids are the cluster's, and the
          // files beside this one write to the same cluster all along, so txid_current() moved
          // without this store writing anything.
          const tables = await store.pg.rows<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
          const newest = tables.map(({ name }) => `SELECT max(xmin::text::bigint) AS xid FROM "${name}"`).join(' UNION ALL ');
          const row = await store.pg.row<{ xid: string | number }>(`SELECT coalesce(max(xid), 0) AS xid FROM (${newest}) AS newest`);
          return Number(row!.xid);
        },
      };
    },
  };
}

/** `?` → `$1`, `$2`, … (the probes' SQL has no `?` inside string literals). */
function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
