// The `postgres` test project (vitest.config.ts) runs the API suite on PostgreSQL
// (docs/hosting.md#several-nodes-on-postgresql): one throwaway cluster for the whole run, with a
// migrated template database; every test server then gets a database of its own copied from the
// template (test/support/server.ts), so files running at once never share one.
import type { TestProject } from 'vitest/node';
import { startClusterWithTemplate } from './shared-postgres.ts';

export const POSTGRES_TEMPLATE = 'voxflow_api_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://… of the run's cluster (its `postgres` database), in the postgres project only. */
    voxflowPostgres: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startClusterWithTemplate(POSTGRES_TEMPLATE);
  project.provide('voxflowPostgres', cluster.url);
  return () => cluster.stop();
}
