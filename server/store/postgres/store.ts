// The store on PostgreSQL (docs/hosting.md): the same Store the rest of the server sees, its
// repositories on a `pg` pool, for several server processes sharing one database.

import type { Store } from '../store.ts';
import { createPgAccountsRepository } from './accounts.ts';
import { createPgApiKeysRepository } from './api-keys.ts';
import { createPgCreditsRepository } from './credits.ts';
import { openPostgres } from './database.ts';
import type { OpenPostgresOptions, PgDatabase } from './database.ts';
import { createPgFlowStorageRepository } from './flow-storage.ts';
import { createPgFlowTestsRepository } from './flow-tests.ts';
import { createPgFlowVersionsRepository } from './flow-versions.ts';
import { createPgFlowsRepository } from './flows.ts';
import { createPgNodesRepository } from './nodes.ts';
import { createPgDoNotCallRepository, createPgPhoneNumbersRepository } from './phone-numbers.ts';
import { createPgProvidersRepository } from './providers.ts';
import { createPgSecretsRepository } from './secrets.ts';
import { createPgSessionsRepository } from './sessions.ts';
import { createPgTimelinesRepository } from './timelines.ts';
import { createPgWarmTransfersRepository } from './warm-transfers.ts';
import { createPgWebhooksRepository } from './webhooks.ts';
import { createPgAnalysesRepository } from './analyses.ts';
import { createPgExperimentsRepository } from './experiments.ts';
import { createPgAnalyticsRepository } from './analytics.ts';

export interface OpenPostgresStoreOptions extends OpenPostgresOptions {
  /** This node's id (default: a new one, repositories/nodes.ts). */
  nodeId?: string;
  /** Connected sessions one account may hold over every node; 0 (the default) for no limit. */
  sessionsPerAccount?: number;
  /** A node silent this long is gone and its calls are ended by the others (default NODE_GONE_AFTER_SECS). */
  nodeGoneAfterSecs?: number;
}

export interface PostgresStore extends Store {
  readonly kind: 'postgres';
  /** The PostgreSQL engine underneath (pool, transactions, LISTEN/NOTIFY). */
  readonly pg: PgDatabase;
}

export async function openPostgresStore(options: OpenPostgresStoreOptions): Promise<PostgresStore> {
  const pg = await openPostgres(options);
  const nodes = createPgNodesRepository(pg, options.nodeId, options.nodeGoneAfterSecs);
  try {
    await nodes.join();
  } catch (error) {
    await pg.close().catch(() => undefined);
    throw error;
  }
  return {
    kind: 'postgres',
    pg,
    writable: () => pg.writable(),
    accounts: createPgAccountsRepository(pg),
    apiKeys: createPgApiKeysRepository(pg),
    flows: createPgFlowsRepository(pg),
    flowVersions: createPgFlowVersionsRepository(pg),
    flowStorage: createPgFlowStorageRepository(pg),
    flowTests: createPgFlowTestsRepository(pg, { id: nodes.self, goneAfterSecs: options.nodeGoneAfterSecs }),
    nodes,
    sessions: createPgSessionsRepository(pg, { id: nodes.self, sessionsPerAccount: options.sessionsPerAccount ?? 0, goneAfterSecs: options.nodeGoneAfterSecs }),
    credits: createPgCreditsRepository(pg),
    providers: createPgProvidersRepository(pg),
    phoneNumbers: createPgPhoneNumbersRepository(pg),
    doNotCall: createPgDoNotCallRepository(pg),
    warmTransfers: createPgWarmTransfersRepository(pg),
    secrets: createPgSecretsRepository(pg),
    timelines: createPgTimelinesRepository(pg),
    webhooks: createPgWebhooksRepository(pg),
    analyses: createPgAnalysesRepository(pg, { id: nodes.self }),
    experiments: createPgExperimentsRepository(pg),
    analytics: createPgAnalyticsRepository(pg),
    // A clean stop takes the node's row with it: its sessions have ended (the engine ends them
    // before the store closes), and no other node need wait out the heartbeat to know it is gone.
    close: async () => {
      if (pg.writable()) await nodes.leave().catch(() => undefined);
      await pg.close();
    },
  };
}
