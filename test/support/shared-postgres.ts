// One PostgreSQL cluster for the whole integration project (its globalSetup starts it), in which
// each test file makes databases of its own: the repository tests on both stores, two nodes on
// one database, two servers over HTTP, migrate-store. Each file used to start a cluster of its
// own: 18 initdb runs and postmasters per `npm test`, about 20 s of CPU on this 2-core machine
// before any test ran (process accounting, one run). A database per test still keeps files and
// tests apart; names carry the worker's pid, so files running at once never meet, and a file's
// databases are dropped when it ends.
//
// A file that needs a cluster-wide property of its own (fsync on, a cluster it stops) still starts
// one with startPostgres().
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../../server/store/postgres/database.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';

/** A database migrated once, copied for each test that wants an empty store. */
export const MIGRATED_TEMPLATE = 'voxflow_store_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://… of the integration project's shared cluster (its `postgres` database). */
    voxflowSharedCluster: string;
  }
}

/** A throwaway cluster for a whole run (fsync off) with a database migrated once, to copy from. */
export async function startClusterWithTemplate(template: string): Promise<TestPostgres> {
  const cluster = await startPostgres({ durable: false });
  const migrated = await openPostgres({ url: await cluster.createDatabase(template), poolSize: 1 });
  await migrated.close();
  return cluster;
}

/** The integration project's globalSetup: starts the cluster and its migrated template. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startClusterWithTemplate(MIGRATED_TEMPLATE);
  project.provide('voxflowSharedCluster', cluster.url);
  return () => cluster.stop();
}

export interface SharedPostgres {
  /** postgres://… of the cluster's `postgres` database (for URLs of databases that do not exist). */
  url: string;
  /** A new database of this file, empty or copied from the migrated template; its URL. */
  createDatabase(prefix: string, options?: { migrated?: boolean }): Promise<string>;
}

let made = 0;

/**
 * The shared cluster, for this file: call at the top level of a file or describe (it registers an
 * afterAll that drops the databases it made).
 */
export function sharedPostgresForThisFile(): SharedPostgres {
  const mine: string[] = [];
  const url = (): string => {
    const cluster = process.env.VITEST ? inject('voxflowSharedCluster') : undefined;
    if (!cluster) throw new Error('no shared PostgreSQL: this file must run in the integration project, whose globalSetup starts it (vitest.config.ts)');
    return cluster;
  };
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  afterAll(async () => {
    for (const name of mine.splice(0)) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  return {
    get url() {
      return url();
    },
    async createDatabase(prefix, { migrated = false } = {}) {
      if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new Error(`not a plain database name: ${prefix}`);
      const name = `${prefix}_${process.pid}_${++made}`;
      await admin(`CREATE DATABASE ${name}${migrated ? ` TEMPLATE ${MIGRATED_TEMPLATE}` : ''}`);
      mine.push(name);
      return url().replace(/\/postgres$/, `/${name}`);
    },
  };
}
