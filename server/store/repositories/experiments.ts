// A/B experiments between a flow's published versions (docs/api.md#experiments). An experiment's
// arms (a version and a weight each) never change once it is made; it runs until stopped (or
// concluded, which stops it and names the winner). A flow has at most one running experiment:
// create refuses a second one in the same write that would make it. The experiment goes with its
// flow when the flow is deleted.
//
// Results are counted from the sessions that recorded the experiment and their arm, with SQL
// aggregates (sessions_by_experiment), never by reading every session.

export interface ExperimentArm {
  /** A published version of the flow. */
  version: number;
  /** A positive whole number; an arm's share of new sessions is its weight over the sum. */
  weight: number;
}

export interface Experiment {
  id: string;
  accountId: string;
  flowId: string;
  name: string;
  arms: ExperimentArm[];
  createdAt: number;
  /** Null while it runs. */
  stoppedAt: number | null;
  /** The version a conclude published; null otherwise. */
  winner: number | null;
}

export interface NewExperiment {
  accountId: string;
  flowId: string;
  name: string;
  arms: ExperimentArm[];
}

/** One arm's counts over its sessions. */
export interface ExperimentArmTotals {
  version: number;
  /** Sessions given this arm. */
  sessions: number;
  /** Of them, those that ended after running (started_at set). */
  calls: number;
  /** Analysed success of the calls: true, false, unknown (a flow without success criteria counts in none). */
  succeeded: number;
  failed: number;
  unknown: number;
  /** Over the calls; null when there are none. */
  averageDurationSecs: number | null;
  averageCostCents: number | null;
}

/** How many of an arm's analysed calls gave an outcome field a value: per value for booleans and `values` (enums), else `value` null. */
export interface ExperimentOutcomeCount {
  version: number;
  field: string;
  /** 'true'/'false' for booleans, the text for a field in `enumFields`; null: counted as present. */
  value: string | null;
  count: number;
}

export interface ExperimentStateCount {
  version: number;
  state: string;
  /** Calls of the arm whose recorded path entered the state. */
  calls: number;
}

export interface ExperimentResults {
  arms: ExperimentArmTotals[];
  outcomes: ExperimentOutcomeCount[];
  states: ExperimentStateCount[];
}

export interface ExperimentsRepository {
  /** 'running' when the flow already has a running experiment (nothing is made). */
  create(input: NewExperiment): Promise<Experiment | 'running'>;
  /** Newest first. */
  list(accountId: string, flowId: string): Promise<Experiment[]>;
  get(accountId: string, flowId: string, id: string): Promise<Experiment | null>;
  /** The flow's running experiment, if any (read at each new session of the flow). */
  running(accountId: string, flowId: string): Promise<Experiment | null>;
  /**
   * Stops it (no more sessions are given an arm) and records the winner when one is given; a
   * stopped experiment keeps its first stop time, and a winner once set stays. Null when unknown.
   */
  stop(accountId: string, flowId: string, id: string, winner: number | null): Promise<Experiment | null>;
  /** Per-arm counts; text values of the fields named in `enumFields` are counted per value. */
  results(id: string, enumFields: readonly string[]): Promise<ExperimentResults>;
}
