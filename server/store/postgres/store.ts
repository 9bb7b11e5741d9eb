// The store on PostgreSQL (DESIGN §15): the same Store the rest of the server sees, its
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
import { createPgProvidersRepository } from './providers.ts';
import { createPgSecretsRepository } from './secrets.ts';
import { createPgSessionsRepository } from './sessions.ts';
import { createPgTimelinesRepository } from './timelines.ts';
import { createPgWebhooksRepository } from './webhooks.ts';

export type OpenPostgresStoreOptions = OpenPostgresOptions;

export interface PostgresStore extends Store {
  readonly kind: 'postgres';
  /** The PostgreSQL engine underneath (pool, transactions, LISTEN/NOTIFY). */
  readonly pg: PgDatabase;
}

export async function openPostgresStore(options: OpenPostgresStoreOptions): Promise<PostgresStore> {
  const pg = await openPostgres(options);
  return {
    kind: 'postgres',
    pg,
    writable: () => pg.writable(),
    accounts: createPgAccountsRepository(pg),
    apiKeys: createPgApiKeysRepository(pg),
    flows: createPgFlowsRepository(pg),
    flowVersions: createPgFlowVersionsRepository(pg),
    flowStorage: createPgFlowStorageRepository(pg),
    flowTests: createPgFlowTestsRepository(pg),
    sessions: createPgSessionsRepository(pg),
    credits: createPgCreditsRepository(pg),
    providers: createPgProvidersRepository(pg),
    secrets: createPgSecretsRepository(pg),
    timelines: createPgTimelinesRepository(pg),
    webhooks: createPgWebhooksRepository(pg),
    close: () => pg.close(),
  };
}
