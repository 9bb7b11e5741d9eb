// Flow tests and their runs (docs/testing.md). A test is a YAML document kept with its flow, in the
// designer's own text (comments kept); a run is a job whose row is written at its start and
// completed with the whole report when it ends. Only the latest runs of a flow are kept.

export interface FlowTestRecord {
  id: string;
  accountId: string;
  flowId: string;
  name: string;
  yamlContent: string;
  createdAt: number;
  updatedAt: number;
}

export type FlowTestRunStatus = 'running' | 'passed' | 'failed' | 'error';

export interface FlowTestRunRecord {
  id: string;
  accountId: string;
  flowId: string;
  mode: string;
  /** Run against the flow's draft (the studio), not its published version. */
  draft: boolean;
  /** The published version run; null for a draft. */
  flowVersion: number | null;
  testIds: string[];
  status: FlowTestRunStatus;
  /** The report (testing/results.ts SuiteResult) as JSON text, once finished. */
  resultJson: string | null;
  error: string | null;
  createdAt: number;
  finishedAt: number | null;
}

export type NewFlowTestRun = Pick<FlowTestRunRecord, 'accountId' | 'flowId' | 'mode' | 'draft' | 'flowVersion' | 'testIds'>;

/** Runs kept per flow; a new run forgets the oldest past this. */
export const FLOW_TEST_RUNS_KEPT = 20;

export interface FlowTestsRepository {
  /** A flow's tests, oldest first. */
  list(accountId: string, flowId: string): Promise<FlowTestRecord[]>;
  get(accountId: string, flowId: string, id: string): Promise<FlowTestRecord | null>;
  count(accountId: string, flowId: string): Promise<number>;
  /** Stores tests in one durable write (one for a POST, several for an imported suite). */
  create(accountId: string, flowId: string, tests: ReadonlyArray<{ name: string; yamlContent: string }>): Promise<FlowTestRecord[]>;
  /** Null when it is not there. */
  update(accountId: string, flowId: string, id: string, changes: { name: string; yamlContent: string }): Promise<FlowTestRecord | null>;
  remove(accountId: string, flowId: string, id: string): Promise<boolean>;
  /**
   * Stores a new 'running' run held by this node. With `perAccount`, it is a claim of one of the
   * account's run slots: it throws TestRunSlotTakenError when the account already has that many
   * runs 'running' on live nodes (on PostgreSQL every node sharing the database, under the
   * account's row lock, as the session cap is counted; on sql.js this process). A 'running' row
   * of a gone node, or of an earlier process of this data folder, was cut by a stop and does not
   * count.
   */
  startRun(run: NewFlowTestRun, slot?: { perAccount: number }): Promise<FlowTestRunRecord>;
  finishRun(id: string, end: { status: Exclude<FlowTestRunStatus, 'running'>; resultJson: string | null; error: string | null }): Promise<void>;
  getRun(accountId: string, flowId: string, id: string): Promise<FlowTestRunRecord | null>;
  /** Newest first, without their reports. */
  listRuns(accountId: string, flowId: string): Promise<Array<Omit<FlowTestRunRecord, 'resultJson'>>>;
}
