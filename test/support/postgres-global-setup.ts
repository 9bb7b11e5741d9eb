// The `postgres` test project (vitest.config.ts) runs the API suite on PostgreSQL (issue 19):
// one throwaway cluster for the whole run, with a migrated template database; every test server
// then gets a database of its own copied from the template (test/support/server.ts), so files
// running at once never share one.
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../../server/store/postgres/database.ts';
import { startPostgres } from './postgres.ts';

export const POSTGRES_TEMPLATE = 'voxflow_api_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://… of the run's cluster (its `postgres` database), in the postgres project only. */
    voxflowPostgres: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startPostgres({ durable: false });
  const template = await openPostgres({ url: await cluster.createDatabase(POSTGRES_TEMPLATE), poolSize: 1 });
  await template.close();
  project.provide('voxflowPostgres', cluster.url);
  return () => cluster.stop();
}
