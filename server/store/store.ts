// The store as the rest of the server sees it: one repository per table, no SQL outside, every
// method async. Two implementations (docs/hosting.md): the embedded sql.js store in
// sqljs/ (the default: the desktop app and one server), and PostgreSQL in postgres/ (several
// nodes on one database). repositories/ holds each repository's interface and types. Callers open
// an implementation from its own folder (sqljs/store.ts, sqljs/worker-store.ts, postgres/store.ts):
// this file loads neither, so code that only uses a Store never pulls in sql.js or pg.

import type { AccountsRepository } from './repositories/accounts.ts';
import type { ApiKeysRepository } from './repositories/api-keys.ts';
import type { CreditsRepository } from './repositories/credits.ts';
import type { FlowsRepository } from './repositories/flows.ts';
import type { FlowStorageRepository } from './repositories/flow-storage.ts';
import type { FlowTestsRepository } from './repositories/flow-tests.ts';
import type { FlowVersionsRepository } from './repositories/flow-versions.ts';
import type { NodesRepository } from './repositories/nodes.ts';
import type { AnalysesRepository } from './repositories/analyses.ts';
import type { ExperimentsRepository } from './repositories/experiments.ts';
import type { AnalyticsRepository } from './repositories/analytics.ts';
import type { DoNotCallRepository } from './repositories/do-not-call.ts';
import type { PhoneNumbersRepository } from './repositories/phone-numbers.ts';
import type { ProvidersRepository } from './repositories/providers.ts';
import type { SecretsRepository } from './repositories/secrets.ts';
import type { SessionsRepository } from './repositories/sessions.ts';
import type { TimelinesRepository } from './repositories/timelines.ts';
import type { WarmTransfersRepository } from './repositories/warm-transfers.ts';
import type { WebhooksRepository } from './repositories/webhooks.ts';

export * from './errors.ts';
export type { Account, AccountsRepository, NewAccount } from './repositories/accounts.ts';
export type { ApiKey, ApiKeysRepository, KeyCheckWithFirstRead, NewApiKey } from './repositories/api-keys.ts';
export type { CreditsRepository, DebitOptions, DebitResult, GrantResult } from './repositories/credits.ts';
export type { Flow, FlowChanges, FlowSummary, FlowsRepository } from './repositories/flows.ts';
export type { FlowStorageRepository, FlowStorageUsage } from './repositories/flow-storage.ts';
export type { FlowTestRecord, FlowTestRunRecord, FlowTestRunStatus, FlowTestsRepository, NewFlowTestRun } from './repositories/flow-tests.ts';
export type { FlowDraft, FlowVersion, FlowVersionSummary, FlowVersionsRepository, NewVersion, PublishResult, VersionAuthor } from './repositories/flow-versions.ts';
export type { NodesRepository } from './repositories/nodes.ts';
export type { AnalyticsRepository, FlowRef, FlowTraffic, TrafficFilter, TransitionSession } from './repositories/analytics.ts';
export type { AnalysesRepository, AnalysisState, AnalysisSuccess, SessionAnalysis } from './repositories/analyses.ts';
export type { Experiment, ExperimentArm, ExperimentArmTotals, ExperimentOutcomeCount, ExperimentResults, ExperimentStateCount, ExperimentsRepository, NewExperiment } from './repositories/experiments.ts';
export type { CarrierFieldChange, ProviderSettings, ProviderSettingsChanges, ProvidersRepository, StoredCarrierField } from './repositories/providers.ts';
export type { DoNotCallEntry, DoNotCallRepository } from './repositories/do-not-call.ts';
export type { Carrier, NewPhoneNumber, PhoneNumber, PhoneNumbersRepository } from './repositories/phone-numbers.ts';
export { CARRIERS, numberKey } from './repositories/phone-numbers.ts';
export type { SecretsRepository, StoredSecret } from './repositories/secrets.ts';
export type {
  CallDirection,
  CallStatus,
  NewConnectedSession,
  NewSession,
  NewSessionPhone,
  SessionExperiment,
  Session,
  SessionEnd,
  SessionFilter,
  SessionMode,
  SessionNode,
  SessionStatus,
  SessionTransport,
  SessionsRepository,
} from './repositories/sessions.ts';
export { CALL_STATUSES, callStatusRank } from './repositories/sessions.ts';
export type { NewWarmTransfer, WarmTransfer, WarmTransfersRepository, WarmTransferState } from './repositories/warm-transfers.ts';
export type { TimelineCounters, TimelineEntry, TimelinesRepository } from './repositories/timelines.ts';
export type {
  AttemptOutcome,
  DueExcept,
  NewWebhook,
  NewWebhookDelivery,
  Webhook,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryStatus,
  WebhooksRepository,
} from './repositories/webhooks.ts';
export { newWebhookId } from './repositories/webhooks.ts';


/**
 * Every repository, whichever database holds them: the embedded sql.js store (the default, one
 * process) or PostgreSQL (`--database-url`, several nodes; docs/hosting.md). Every method returns a
 * Promise, so the rest of the server does not care which.
 */
export interface Store {
  readonly kind: 'sqljs' | 'postgres';
  /** False while the store refuses writes (a full disk, a lost database connection): /health says so. */
  writable(): boolean;
  accounts: AccountsRepository;
  apiKeys: ApiKeysRepository;
  flows: FlowsRepository;
  /** Each flow's versions, its draft and publishing (docs/flows.md#drafts). */
  flowVersions: FlowVersionsRepository;
  /** What an account's flows take up, for its storage quota. */
  flowStorage: FlowStorageRepository;
  /** Each flow's tests and their runs (docs/testing.md#flow-tests). */
  flowTests: FlowTestsRepository;
  /** This server process as a node among the ones sharing the store (docs/hosting.md). */
  nodes: NodesRepository;
  /** Sessions record the node that connected them; the per-account session cap is held here. */
  sessions: SessionsRepository;
  credits: CreditsRepository;
  /** Provider choices and keys, and each phone carrier's credentials (sealed where secret). */
  providers: ProvidersRepository;
  /** Phone numbers bound to flows, unique over the whole server. */
  phoneNumbers: PhoneNumbersRepository;
  /** Each account's numbers its outbound calls must not ring. */
  doNotCall: DoNotCallRepository;
  /** Phone calls' warm transfers while they are made, readable from any node. */
  warmTransfers: WarmTransfersRepository;
  /** An account's named secrets for flow http tools, sealed (docs/flows.md#extended-flow-keys). */
  secrets: SecretsRepository;
  timelines: TimelinesRepository;
  webhooks: WebhooksRepository;
  /** Each ended session's outcome and success, analysed after its end (docs/api.md#outcome-and-success). */
  analyses: AnalysesRepository;
  /** A/B experiments between a flow's published versions (docs/api.md#experiments). */
  experiments: ExperimentsRepository;
  /** A flow's traffic: where its calls went and ended, counted in the database (docs/api.md#analytics). */
  analytics: AnalyticsRepository;
  /** Waits for pending writes, snapshots, releases the data dir's lock. Idempotent. */
  close(): Promise<void>;
}
