// The embedded store assembled: sql.js in this process (./database.ts: journal, fsync, snapshots)
// and its repositories (./repositories/), behind the Store interface of ../store.ts.

import type { Store } from '../store.ts';
import { openDatabase } from './database.ts';
import type { Database, OpenDatabaseOptions } from './database.ts';
import { newNodeId } from '../repositories/nodes.ts';
import { createAccountsRepository } from './repositories/accounts.ts';
import { createApiKeysRepository } from './repositories/api-keys.ts';
import { createCreditsRepository } from './repositories/credits.ts';
import { createFlowsRepository } from './repositories/flows.ts';
import { createFlowStorageRepository } from './repositories/flow-storage.ts';
import { createFlowTestsRepository } from './repositories/flow-tests.ts';
import { createFlowVersionsRepository } from './repositories/flow-versions.ts';
import { createEmbeddedNodesRepository } from './repositories/nodes.ts';
import { createDoNotCallRepository, createPhoneNumbersRepository } from './repositories/phone-numbers.ts';
import { createProvidersRepository } from './repositories/providers.ts';
import { createSecretsRepository } from './repositories/secrets.ts';
import { createSessionsRepository } from './repositories/sessions.ts';
import { startReadsApart } from '../repositories/sessions.ts';
import { createTimelinesRepository } from './repositories/timelines.ts';
import { createWarmTransfersRepository } from './repositories/warm-transfers.ts';
import { createWebhooksRepository } from './repositories/webhooks.ts';
import { createAnalysesRepository } from './repositories/analyses.ts';
import { createExperimentsRepository } from './repositories/experiments.ts';
import { createAnalyticsRepository } from './repositories/analytics.ts';

/**
 * The embedded store opened in the calling thread (openStore): sql.js, journal and snapshots in
 * the data folder. The server serves it from a worker thread instead (openWorkerStore).
 */
export interface EmbeddedStore extends Store {
  readonly kind: 'sqljs';
  /** The engine underneath, for stats and measuring durable write latency. */
  db: Database;
}

export interface OpenStoreOptions extends OpenDatabaseOptions {
  /** This server process's node id (default: a new one, repositories/nodes.ts). */
  nodeId?: string;
  /** Connected voice sessions one account may hold at once; 0 (the default) for no limit. */
  sessionsPerAccount?: number;
}

export async function openStore(options: OpenStoreOptions): Promise<EmbeddedStore> {
  const db = await openDatabase(options);
  const flows = createFlowsRepository(db);
  const nodes = createEmbeddedNodesRepository(options.nodeId ?? newNodeId());
  const credits = createCreditsRepository(db);
  const providers = createProvidersRepository(db);
  const experiments = createExperimentsRepository(db);
  return {
    kind: 'sqljs',
    writable: () => !db.stats().failed,
    db,
    accounts: createAccountsRepository(db),
    apiKeys: createApiKeysRepository(db),
    flows,
    flowVersions: createFlowVersionsRepository(db, (accountId) => flows.forgetList(accountId)),
    flowStorage: createFlowStorageRepository(db),
    flowTests: createFlowTestsRepository(db, { id: nodes.self }),
    nodes,
    sessions: {
      ...createSessionsRepository(db, { id: nodes.self, sessionsPerAccount: options.sessionsPerAccount ?? 0 }),
      startReads: startReadsApart({ flows, credits, providers, experiments }),
    },
    credits,
    providers,
    phoneNumbers: createPhoneNumbersRepository(db),
    doNotCall: createDoNotCallRepository(db),
    warmTransfers: createWarmTransfersRepository(db),
    secrets: createSecretsRepository(db),
    timelines: createTimelinesRepository(db),
    webhooks: createWebhooksRepository(db),
    analyses: createAnalysesRepository(db, { id: nodes.self }),
    experiments,
    analytics: createAnalyticsRepository(db),
    close: () => db.close(),
  };
}
