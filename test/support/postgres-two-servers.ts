// Two Voxflow servers on one PostgreSQL database, over real HTTP, as two nodes behind a load
// balancer (docs/hosting.md#several-nodes-on-postgresql): per call a new database on the
// integration project's cluster (test/support/shared-postgres.ts), which both servers open at once,
// with the same keys (the multi-node settings in docs/hosting.md) and data dirs of their own. The
// same database and keys are handed out for a node started as a child process (spawnServer).
import { randomBytes } from 'node:crypto';
import { afterEach } from 'vitest';
import type { ConfigInput } from '../../server/config.ts';
import { startTestServer, type TestServer, type TestServerOptions } from './server.ts';
import { sharedPostgresForThisFile } from './shared-postgres.ts';

export interface TwoNodes {
  a: TestServer;
  b: TestServer;
  databaseUrl: string;
  /** What another node needs to join them: the environment of `voxflow --serve`. */
  nodeEnv: Record<string, string>;
}

export interface TwoServersRig {
  /** Two servers on a new database, closed after the test. */
  start(overrides?: ConfigInput, options?: TestServerOptions): Promise<TwoNodes>;
}

export function twoServersForThisFile(): TwoServersRig {
  const cluster = sharedPostgresForThisFile();
  const open: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close().catch(() => undefined)));
  });
  return {
    async start(overrides = {}, options = {}) {
      const databaseUrl = await cluster.createDatabase('voxflow_two_servers');
      const keys = { secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') };
      // At once, as two nodes of a fleet start: their migrations must not race.
      const started = await Promise.allSettled([0, 1].map(() => startTestServer({ ...overrides, databaseUrl, ...keys }, options)));
      for (const outcome of started) if (outcome.status === 'fulfilled') open.push(outcome.value);
      const failed = started.find((outcome) => outcome.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      const [a, b] = open.slice(-2) as [TestServer, TestServer];
      return {
        a,
        b,
        databaseUrl,
        nodeEnv: { VOXFLOW_DATABASE_URL: databaseUrl, VOXFLOW_SECRET_KEY: keys.secretKey, VOXFLOW_JWT_SECRET: keys.jwtSecret },
      };
    },
  };
}
