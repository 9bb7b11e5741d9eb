// Flow tests and their runs on PostgreSQL: the same promises as the sql.js
// repository (server/store/repositories/flow-tests.ts). Nothing here is read-then-written across
// nodes except the runs kept per flow (two nodes starting runs of one flow at once may each keep
// the newest FLOW_TEST_RUNS_KEPT, which is still at most that many once both have committed) and
// a run's slot: a claim locks the account's row (FOR NO KEY UPDATE, as a session's connect does),
// counts the account's 'running' runs on live nodes and inserts in the same transaction, so two
// nodes claiming at once are ordered and the second sees the first.
import { newId } from '../ids.ts';
import { FLOW_TEST_RUNS_KEPT } from '../repositories/flow-tests.ts';
import type { FlowTestRecord, FlowTestRunRecord, FlowTestRunStatus, FlowTestsRepository } from '../repositories/flow-tests.ts';
import { TestRunSlotTakenError } from '../errors.ts';
import { NODE_GONE_AFTER_SECS } from '../repositories/nodes.ts';
import type { PgDatabase } from './database.ts';
import type { TestRow } from '../rows/flow-tests.ts';
import { toTest } from '../rows/flow-tests.ts';

interface RunRow {
  id: string;
  account_id: string;
  flow_id: string;
  mode: string;
  draft: number | boolean;
  flow_version: number | null;
  test_ids: string;
  status: FlowTestRunStatus;
  result_json: string | null;
  error: string | null;
  created_at: number;
  finished_at: number | null;
}

const TEST_COLUMNS = 'id, account_id, flow_id, name, yaml_content, created_at, updated_at';

const toRun = (row: RunRow): FlowTestRunRecord => ({
  id: row.id,
  accountId: row.account_id,
  flowId: row.flow_id,
  mode: row.mode,
  draft: row.draft === 1 || row.draft === true,
  flowVersion: row.flow_version === null ? null : Number(row.flow_version),
  testIds: JSON.parse(row.test_ids) as string[],
  status: row.status,
  resultJson: row.result_json,
  error: row.error,
  createdAt: row.created_at,
  finishedAt: row.finished_at,
});

export function createPgFlowTestsRepository(db: PgDatabase, node: { id: string; goneAfterSecs?: number }): FlowTestsRepository {
  const goneAfterSecs = Number(node.goneAfterSecs ?? NODE_GONE_AFTER_SECS);
  return {
    async list(accountId, flowId) {
      const rows = await db.rows<TestRow>(`SELECT ${TEST_COLUMNS} FROM flow_tests WHERE account_id = $1 AND flow_id = $2 ORDER BY created_at, rowid`, [accountId, flowId]);
      return rows.map(toTest);
    },

    async get(accountId, flowId, id) {
      const row = await db.row<TestRow>(`SELECT ${TEST_COLUMNS} FROM flow_tests WHERE id = $1 AND account_id = $2 AND flow_id = $3`, [id, accountId, flowId]);
      return row ? toTest(row) : null;
    },

    async count(accountId, flowId) {
      const row = await db.row<{ n: number }>('SELECT COUNT(*) AS n FROM flow_tests WHERE account_id = $1 AND flow_id = $2', [accountId, flowId]);
      return Number(row?.n ?? 0);
    },

    create(accountId, flowId, tests) {
      const now = db.now();
      const records = tests.map((t): FlowTestRecord => ({ id: newId(), accountId, flowId, name: t.name, yamlContent: t.yamlContent, createdAt: now, updatedAt: now }));
      return db.transaction(async (tx) => {
        // One by one, in the suite's order: their order of insertion is the list's order at equal times.
        for (const r of records) {
          await tx.run('INSERT INTO flow_tests (id, account_id, flow_id, name, yaml_content, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
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

    async update(accountId, flowId, id, changes) {
      const row = await db.row<TestRow>(
        `UPDATE flow_tests SET name = $1, yaml_content = $2, updated_at = $3 WHERE id = $4 AND account_id = $5 AND flow_id = $6
         RETURNING ${TEST_COLUMNS}`,
        [changes.name, changes.yamlContent, db.now(), id, accountId, flowId],
      );
      return row ? toTest(row) : null;
    },

    async remove(accountId, flowId, id) {
      return (await db.run('DELETE FROM flow_tests WHERE id = $1 AND account_id = $2 AND flow_id = $3', [id, accountId, flowId])) === 1;
    },

    startRun(run, slot) {
      const record: FlowTestRunRecord = { ...run, id: newId(), status: 'running', resultJson: null, error: null, createdAt: db.now(), finishedAt: null };
      return db.transaction(async (tx) => {
        if (slot) {
          await tx.run('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [run.accountId]);
          const running = await tx.row<{ n: number }>(
            `SELECT COUNT(*) AS n FROM flow_test_runs r WHERE r.account_id = $1 AND r.status = 'running'
               AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = r.node_id AND n.last_seen_at > $2::double precision - ${goneAfterSecs})`,
            [run.accountId, record.createdAt],
          );
          if (Number(running?.n ?? 0) >= slot.perAccount) throw new TestRunSlotTakenError(slot.perAccount);
        }
        await tx.run(
          `INSERT INTO flow_test_runs (id, account_id, flow_id, mode, draft, flow_version, test_ids, status, created_at, node_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8, $9)`,
          [record.id, run.accountId, run.flowId, run.mode, run.draft ? 1 : 0, run.flowVersion, JSON.stringify(run.testIds), record.createdAt, node.id],
        );
        await tx.run(
          `DELETE FROM flow_test_runs WHERE flow_id = $1 AND id NOT IN
             (SELECT id FROM flow_test_runs WHERE flow_id = $1 ORDER BY created_at DESC, rowid DESC LIMIT $2)`,
          [run.flowId, FLOW_TEST_RUNS_KEPT],
        );
        return record;
      });
    },

    async finishRun(id, end) {
      await db.run('UPDATE flow_test_runs SET status = $1, result_json = $2, error = $3, finished_at = $4 WHERE id = $5', [end.status, end.resultJson, end.error, db.now(), id]);
    },

    async getRun(accountId, flowId, id) {
      const row = await db.row<RunRow>(
        `SELECT id, account_id, flow_id, mode, draft, flow_version, test_ids, status, result_json, error, created_at, finished_at
         FROM flow_test_runs WHERE id = $1 AND account_id = $2 AND flow_id = $3`,
        [id, accountId, flowId],
      );
      return row ? toRun(row) : null;
    },

    async listRuns(accountId, flowId) {
      const rows = await db.rows<RunRow>(
        `SELECT id, account_id, flow_id, mode, draft, flow_version, test_ids, status, NULL AS result_json, error, created_at, finished_at
         FROM flow_test_runs WHERE account_id = $1 AND flow_id = $2 ORDER BY created_at DESC, rowid DESC`,
        [accountId, flowId],
      );
      return rows.map((row) => {
        const { resultJson: _omitted, ...rest } = toRun(row);
        return rest;
      });
    },
  };
}
