// The embedded store's (sql.js) experiments; the interface is ../../repositories/experiments.ts.
import type { Database } from '../database.ts';
import type { Experiment, ExperimentsRepository } from '../../repositories/experiments.ts';
import { newId } from '../../ids.ts';
import { ARM_TOTALS_SQL, EXPERIMENT_COLUMNS, toArmTotals, toExperiment, toOutcomeCount, toStateCount, type ArmTotalsRow, type ExperimentRow } from '../../rows/experiments.ts';

export function createExperimentsRepository(db: Database): ExperimentsRepository {
  const read = (accountId: string, flowId: string, id: string): Experiment | null => {
    const row = db.get<ExperimentRow>(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE id = ? AND account_id = ? AND flow_id = ?`, [id, accountId, flowId]);
    return row ? toExperiment(row) : null;
  };

  return {
    create(input) {
      const experiment: Experiment = { id: newId(), ...input, createdAt: db.now(), stoppedAt: null, winner: null };
      return db.write((tx) => {
        // The unique index on running experiments per flow refuses a second one.
        const made = tx.run(
          `INSERT INTO experiments (${EXPERIMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL) ON CONFLICT DO NOTHING`,
          [experiment.id, input.accountId, input.flowId, input.name, JSON.stringify(input.arms), experiment.createdAt],
        );
        return made === 1 ? experiment : 'running';
      });
    },

    async list(accountId, flowId) {
      return db
        .all<ExperimentRow>(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE account_id = ? AND flow_id = ? ORDER BY created_at DESC, rowid DESC`, [accountId, flowId])
        .map(toExperiment);
    },

    async get(accountId, flowId, id) {
      return read(accountId, flowId, id);
    },

    async running(accountId, flowId) {
      const row = db.get<ExperimentRow>(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE account_id = ? AND flow_id = ? AND stopped_at IS NULL`, [accountId, flowId]);
      return row ? toExperiment(row) : null;
    },

    async stop(accountId, flowId, id, winner) {
      const changed = await db.write((tx) =>
        tx.run('UPDATE experiments SET stopped_at = COALESCE(stopped_at, ?), winner = COALESCE(winner, ?) WHERE id = ? AND account_id = ? AND flow_id = ?', [
          db.now(),
          winner,
          id,
          accountId,
          flowId,
        ]),
      );
      return changed === 1 ? read(accountId, flowId, id) : null;
    },

    async results(id, enumFields) {
      const arms = db.all<ArmTotalsRow>(ARM_TOTALS_SQL.replace('$1', '?'), [id]).map(toArmTotals);
      const enumList = enumFields.length > 0 ? enumFields.map(() => '?').join(', ') : 'NULL';
      const outcomes = db
        .all<{ version: number; field: string; value: string | null; count: number }>(
          `SELECT version, field, value, COUNT(*) AS count FROM (
             SELECT s.experiment_arm AS version, f.key AS field,
                    CASE json_type(f.value, '$.value')
                      WHEN 'true' THEN 'true'
                      WHEN 'false' THEN 'false'
                      WHEN 'text' THEN CASE WHEN f.key IN (${enumList}) THEN json_extract(f.value, '$.value') END
                    END AS value
             FROM sessions s JOIN session_analyses a ON a.session_id = s.id, json_each(a.result, '$.outcome.fields') f
             WHERE s.experiment_id = ? AND a.state = 'done' AND a.result IS NOT NULL
               AND json_type(f.value, '$.value') IS NOT NULL AND json_type(f.value, '$.value') <> 'null'
           ) GROUP BY version, field, value`,
          [...enumFields, id],
        )
        .map(toOutcomeCount);
      const states = db
        .all<{ version: number; state: string; calls: number }>(
          `SELECT s.experiment_arm AS version, json_extract(e.data, '$.state') AS state, COUNT(DISTINCT s.id) AS calls
           FROM sessions s JOIN session_events e ON e.session_id = s.id
           WHERE s.experiment_id = ? AND s.status = 'ended' AND s.started_at IS NOT NULL AND e.type = 'flow_state'
           GROUP BY s.experiment_arm, json_extract(e.data, '$.state')`,
          [id],
        )
        .map(toStateCount);
      return { arms, outcomes, states };
    },
  };
}
