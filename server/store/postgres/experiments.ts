// Experiments on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/experiments.ts). The partial unique index on running experiments per flow
// keeps two nodes from starting two at once.
import type { Experiment, ExperimentsRepository } from '../repositories/experiments.ts';
import { newId } from '../ids.ts';
import { ARM_TOTALS_SQL, EXPERIMENT_COLUMNS, toArmTotals, toExperiment, toOutcomeCount, toStateCount, type ArmTotalsRow, type ExperimentRow } from '../rows/experiments.ts';
import { prepared, type PgDatabase } from './database.ts';

/** Read by every POST /v1/sessions with a flow: prepared once per connection. */
const RUNNING = prepared(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE account_id = $1 AND flow_id = $2 AND stopped_at IS NULL`);

export function createPgExperimentsRepository(db: PgDatabase): ExperimentsRepository {
  const read = async (accountId: string, flowId: string, id: string): Promise<Experiment | null> => {
    const row = await db.row<ExperimentRow>(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE id = $1 AND account_id = $2 AND flow_id = $3`, [id, accountId, flowId]);
    return row ? toExperiment(row) : null;
  };

  return {
    async create(input) {
      const experiment: Experiment = { id: newId(), ...input, createdAt: db.now(), stoppedAt: null, winner: null };
      const made = await db.run(`INSERT INTO experiments (${EXPERIMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL) ON CONFLICT DO NOTHING`, [
        experiment.id,
        input.accountId,
        input.flowId,
        input.name,
        JSON.stringify(input.arms),
        experiment.createdAt,
      ]);
      return made === 1 ? experiment : 'running';
    },

    async list(accountId, flowId) {
      const rows = await db.rows<ExperimentRow>(`SELECT ${EXPERIMENT_COLUMNS} FROM experiments WHERE account_id = $1 AND flow_id = $2 ORDER BY created_at DESC, id DESC`, [accountId, flowId]);
      return rows.map(toExperiment);
    },

    get: read,

    async running(accountId, flowId) {
      const row = await db.row<ExperimentRow>(RUNNING, [accountId, flowId]);
      return row ? toExperiment(row) : null;
    },

    async stop(accountId, flowId, id, winner) {
      const changed = await db.run(
        'UPDATE experiments SET stopped_at = COALESCE(stopped_at, $1), winner = COALESCE(winner, $2::integer) WHERE id = $3 AND account_id = $4 AND flow_id = $5',
        [db.now(), winner, id, accountId, flowId],
      );
      return changed === 1 ? read(accountId, flowId, id) : null;
    },

    async results(id, enumFields) {
      const arms = (await db.rows<ArmTotalsRow>(ARM_TOTALS_SQL, [id])).map(toArmTotals);
      const outcomes = (
        await db.rows<{ version: number; field: string; value: string | null; count: string }>(
          `SELECT version, field, value, COUNT(*) AS count FROM (
             SELECT s.experiment_arm AS version, f.key AS field,
                    CASE jsonb_typeof(f.value -> 'value')
                      WHEN 'boolean' THEN f.value ->> 'value'
                      WHEN 'string' THEN CASE WHEN f.key = ANY($2::text[]) THEN f.value ->> 'value' END
                    END AS value
             FROM sessions s JOIN session_analyses a ON a.session_id = s.id,
                  jsonb_each(COALESCE(a.result::jsonb -> 'outcome' -> 'fields', '{}'::jsonb)) f
             WHERE s.experiment_id = $1 AND a.state = 'done' AND a.result IS NOT NULL
               AND jsonb_typeof(f.value -> 'value') IS NOT NULL AND jsonb_typeof(f.value -> 'value') <> 'null'
           ) counted GROUP BY version, field, value`,
          [id, [...enumFields]],
        )
      ).map(toOutcomeCount);
      const states = (
        await db.rows<{ version: number; state: string; calls: string }>(
          `SELECT s.experiment_arm AS version, (e.data::jsonb ->> 'state') AS state, COUNT(DISTINCT s.id) AS calls
           FROM sessions s JOIN session_events e ON e.session_id = s.id
           WHERE s.experiment_id = $1 AND s.status = 'ended' AND s.started_at IS NOT NULL AND e.type = 'flow_state'
           GROUP BY s.experiment_arm, (e.data::jsonb ->> 'state')`,
          [id],
        )
      ).map(toStateCount);
      return { arms, outcomes, states };
    },
  };
}
