// Two Voxflow nodes on one PostgreSQL, below the API (docs/hosting.md#several-nodes-on-postgresql):
// per test, a new database on the integration project's cluster (test/support/shared-postgres.ts),
// opened by two stores with their own pools, as two server processes open it.

import { openPostgresStore } from '../../../server/store/postgres/store.ts';
import type { PostgresStore } from '../../../server/store/postgres/store.ts';
import { sharedPostgresForThisFile, type SharedPostgres } from '../../support/shared-postgres.ts';
import { closeAfterTest } from '../helpers.ts';

export interface PostgresNodes {
  /** A new database and the URL to it. */
  database(): Promise<string>;
  /** Two stores (two pools) on one new database. */
  twoNodes(options?: { now?: () => number; poolSize?: number }): Promise<[PostgresStore, PostgresStore]>;
  cluster(): SharedPostgres;
}

export function postgresNodesForThisFile(): PostgresNodes {
  const cluster = sharedPostgresForThisFile();
  const database = () => cluster.createDatabase('voxflow_nodes');
  return {
    database,
    cluster: () => cluster,
    async twoNodes({ now, poolSize = 5 } = {}) {
      const url = await database();
      // One after the other would hide a race between their migrations: open both at once.
      const [a, b] = await Promise.all([0, 1].map(() => openPostgresStore({ url, poolSize, ...(now ? { now } : {}) })));
      return [closeAfterTest(a!), closeAfterTest(b!)];
    },
  };
}
