// The embedded store's (sql.js) flow-tests repository; its interface and types are in ../../repositories/flow-tests.ts.
import type { Database } from '../database.ts';
import { TestRunSlotTakenError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { FlowTestRecord, FlowTestRunStatus, FlowTestRunRecord, FlowTestsRepository } from '../../repositories/flow-tests.ts';
import { FLOW_TEST_RUNS_KEPT } from '../../repositories/flow-tests.ts';
import type { TestRow } from '../../rows/flow-tests.ts';
import { toTest } from '../../rows/flow-tests.ts';

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

/**
 * `node` is this process's id: the one process that holds the data folder. A 'running' row of
 * another id was left by an earlier process, cut by its stop, and holds no slot.
 */
export function createFlowTestsRepository(db: Database, node: { id: string }): FlowTestsRepository {
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

    startRun(run, slot) {
      const record: FlowTestRunRecord = { ...run, id: newId(), status: 'running', resultJson: null, error: null, createdAt: db.now(), finishedAt: null };
      return db.write((tx) => {
        if (slot) {
          const running = tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM flow_test_runs WHERE account_id = ? AND status = 'running' AND node_id = ?`, [run.accountId, node.id])!.n;
          if (running >= slot.perAccount) throw new TestRunSlotTakenError(slot.perAccount);
        }
        tx.run(
          `INSERT INTO flow_test_runs (id, account_id, flow_id, mode, draft, flow_version, test_ids, status, created_at, node_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
          [record.id, run.accountId, run.flowId, run.mode, run.draft ? 1 : 0, run.flowVersion, JSON.stringify(run.testIds), record.createdAt, node.id],
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
