// Two Voxflow nodes on one PostgreSQL, below the API (issue 19, DESIGN §15): one throwaway cluster
// per test file (started in beforeAll, stopped in afterAll) and, per test, a new database opened
// by two stores with their own pools, as two server processes open it.

import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from '../../server/store/postgres/store.ts';
import type { PostgresStore } from '../../server/store/postgres/store.ts';
import { startPostgres } from '../support/postgres.ts';
import type { TestPostgres } from '../support/postgres.ts';
import { closeAfterTest } from './helpers.ts';

export interface PostgresNodes {
  /** A new database and the URL to it. */
  database(): Promise<string>;
  /** Two stores (two pools) on one new database. */
  twoNodes(options?: { now?: () => number; poolSize?: number }): Promise<[PostgresStore, PostgresStore]>;
  cluster(): TestPostgres;
}

export function postgresNodesForThisFile(): PostgresNodes {
  let cluster: TestPostgres | undefined;
  let made = 0;
  beforeAll(async () => {
    cluster = await startPostgres({ durable: false });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  const running = (): TestPostgres => {
    if (!cluster) throw new Error('the test PostgreSQL is not running (use it inside a test)');
    return cluster;
  };
  const database = () => running().createDatabase(`voxflow_nodes_${++made}`);
  return {
    database,
    cluster: running,
    async twoNodes({ now, poolSize = 5 } = {}) {
      const url = await database();
      // One after the other would hide a race between their migrations: open both at once.
      const [a, b] = await Promise.all([0, 1].map(() => openPostgresStore({ url, poolSize, ...(now ? { now } : {}) })));
      return [closeAfterTest(a!), closeAfterTest(b!)];
    },
  };
}
