// Flow tests and their runs (DESIGN §14). A test is a YAML document kept with its flow, in the
// designer's own text (comments kept); a run is a job whose row is written at its start and
// completed with the whole report when it ends. Only the latest runs of a flow are kept.

import type { Database } from '../database.ts';
import { newId } from '../ids.ts';

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
  startRun(run: NewFlowTestRun): Promise<FlowTestRunRecord>;
  finishRun(id: string, end: { status: Exclude<FlowTestRunStatus, 'running'>; resultJson: string | null; error: string | null }): Promise<void>;
  getRun(accountId: string, flowId: string, id: string): Promise<FlowTestRunRecord | null>;
  /** Newest first, without their reports. */
  listRuns(accountId: string, flowId: string): Promise<Array<Omit<FlowTestRunRecord, 'resultJson'>>>;
}

interface TestRow {
  id: string;
  account_id: string;
  flow_id: string;
  name: string;
  yaml_content: string;
  created_at: number;
  updated_at: number;
}

interface RunRow {
  id: string;
  account_id: string;
  flow_id: string;
  mode: string;
  draft: number;
  flow_version: number | null;
  test_ids: string;
  status: FlowTestRunStatus;
  result_json: string | null;
  error: string | null;
  created_at: number;
  finished_at: number | null;
}

const toTest = (row: TestRow): FlowTestRecord => ({
  id: row.id,
  accountId: row.account_id,
  flowId: row.flow_id,
  name: row.name,
  yamlContent: row.yaml_content,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toRun = (row: RunRow): FlowTestRunRecord => ({
  id: row.id,
  accountId: row.account_id,
  flowId: row.flow_id,
  mode: row.mode,
  draft: row.draft === 1,
  flowVersion: row.flow_version,
  testIds: JSON.parse(row.test_ids) as string[],
  status: row.status,
  resultJson: row.result_json,
  error: row.error,
  createdAt: row.created_at,
  finishedAt: row.finished_at,
});

export function createFlowTestsRepository(db: Database): FlowTestsRepository {
  return {
    async list(accountId, flowId) {
      return db.all<TestRow>('SELECT * FROM flow_tests WHERE account_id = ? AND flow_id = ? ORDER BY created_at, rowid', [accountId, flowId]).map(toTest);
    },

    async get(accountId, flowId, id) {
      const row = db.get<TestRow>('SELECT * FROM flow_tests WHERE id = ? AND account_id = ? AND flow_id = ?', [id, accountId, flowId]);
      return row ? toTest(row) : null;
    },

    async count(accountId, flowId) {
      return db.get<{ n: number }>('SELECT COUNT(*) AS n FROM flow_tests WHERE account_id = ? AND flow_id = ?', [accountId, flowId])?.n ?? 0;
    },

    create(accountId, flowId, tests) {
      const now = db.now();
      const records = tests.map((t): FlowTestRecord => ({ id: newId(), accountId, flowId, name: t.name, yamlContent: t.yamlContent, createdAt: now, updatedAt: now }));
      return db.write((tx) => {
        for (const r of records) {
          tx.run('INSERT INTO flow_tests (id, account_id, flow_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
            r.id,
            accountId,
            flowId,
            r.name,
            r.yamlContent,
            now,
            now,
          ]);
        }
        return records;
      });
    },

    update(accountId, flowId, id, changes) {
      const now = db.now();
      return db.write((tx) => {
        tx.run('UPDATE flow_tests SET name = ?, yaml_content = ?, updated_at = ? WHERE id = ? AND account_id = ? AND flow_id = ?', [
          changes.name,
          changes.yamlContent,
          now,
          id,
          accountId,
          flowId,
        ]);
        const row = tx.get<TestRow>('SELECT * FROM flow_tests WHERE id = ? AND account_id = ? AND flow_id = ?', [id, accountId, flowId]);
        return row ? toTest(row) : null;
      });
    },

    remove(accountId, flowId, id) {
      return db.write((tx) => {
        const found = tx.get('SELECT id FROM flow_tests WHERE id = ? AND account_id = ? AND flow_id = ?', [id, accountId, flowId]);
        if (!found) return false;
        tx.run('DELETE FROM flow_tests WHERE id = ?', [id]);
        return true;
      });
    },

    startRun(run) {
      const record: FlowTestRunRecord = { ...run, id: newId(), status: 'running', resultJson: null, error: null, createdAt: db.now(), finishedAt: null };
      return db.write((tx) => {
        tx.run(
          `INSERT INTO flow_test_runs (id, account_id, flow_id, mode, draft, flow_version, test_ids, status, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)`,
          [record.id, run.accountId, run.flowId, run.mode, run.draft ? 1 : 0, run.flowVersion, JSON.stringify(run.testIds), record.createdAt],
        );
        tx.run(
          `DELETE FROM flow_test_runs WHERE flow_id = ? AND id NOT IN
             (SELECT id FROM flow_test_runs WHERE flow_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
          [run.flowId, run.flowId, FLOW_TEST_RUNS_KEPT],
        );
        return record;
      });
    },

    finishRun(id, end) {
      const now = db.now();
      return db.write((tx) => {
        tx.run('UPDATE flow_test_runs SET status = ?, result_json = ?, error = ?, finished_at = ? WHERE id = ?', [end.status, end.resultJson, end.error, now, id]);
      });
    },

    async getRun(accountId, flowId, id) {
      const row = db.get<RunRow>('SELECT * FROM flow_test_runs WHERE id = ? AND account_id = ? AND flow_id = ?', [id, accountId, flowId]);
      return row ? toRun(row) : null;
    },

    async listRuns(accountId, flowId) {
      return db
        .all<RunRow>(
          `SELECT id, account_id, flow_id, mode, draft, flow_version, test_ids, status, NULL AS result_json, error, created_at, finished_at
           FROM flow_test_runs WHERE account_id = ? AND flow_id = ? ORDER BY created_at DESC, rowid DESC`,
          [accountId, flowId],
        )
        .map((row) => {
          const { resultJson: _omitted, ...rest } = toRun(row);
          return rest;
        });
    },
  };
}
