// The experiments table's rows as both stores read them, and the results' aggregate rows
// (repositories/experiments.ts). PostgreSQL gives counts and averages as text: Number() them.
import type { Experiment, ExperimentArmTotals, ExperimentOutcomeCount, ExperimentStateCount } from '../repositories/experiments.ts';

export interface ExperimentRow {
  id: string;
  account_id: string;
  flow_id: string;
  name: string;
  arms: string;
  created_at: number;
  stopped_at: number | null;
  winner: number | null;
}

export const EXPERIMENT_COLUMNS = 'id, account_id, flow_id, name, arms, created_at, stopped_at, winner';

export function toExperiment(row: ExperimentRow): Experiment {
  return {
    id: row.id,
    accountId: row.account_id,
    flowId: row.flow_id,
    name: row.name,
    arms: JSON.parse(row.arms) as Experiment['arms'],
    createdAt: Number(row.created_at),
    stoppedAt: row.stopped_at === null ? null : Number(row.stopped_at),
    winner: row.winner === null ? null : Number(row.winner),
  };
}

/** The per-arm totals: the same SQL on both stores, `$1` the experiment id. */
export const ARM_TOTALS_SQL = `
  SELECT s.experiment_arm AS version,
         COUNT(*) AS sessions,
         SUM(CASE WHEN s.status = 'ended' AND s.started_at IS NOT NULL THEN 1 ELSE 0 END) AS calls,
         SUM(CASE WHEN s.status = 'ended' AND s.started_at IS NOT NULL AND a.success = 'true' THEN 1 ELSE 0 END) AS succeeded,
         SUM(CASE WHEN s.status = 'ended' AND s.started_at IS NOT NULL AND a.success = 'false' THEN 1 ELSE 0 END) AS failed,
         SUM(CASE WHEN s.status = 'ended' AND s.started_at IS NOT NULL AND a.success = 'unknown' THEN 1 ELSE 0 END) AS unknown,
         AVG(CASE WHEN s.status = 'ended' AND s.started_at IS NOT NULL THEN s.duration_secs END) AS average_duration,
         AVG(CASE WHEN s.status = 'ended' AND s.started_at IS NOT NULL THEN s.credits_charged_cents END) AS average_cost
  FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.id
  WHERE s.experiment_id = $1
  GROUP BY s.experiment_arm`;

export interface ArmTotalsRow {
  version: number | string;
  sessions: number | string;
  calls: number | string | null;
  succeeded: number | string | null;
  failed: number | string | null;
  unknown: number | string | null;
  average_duration: number | string | null;
  average_cost: number | string | null;
}

const orNull = (value: number | string | null): number | null => (value === null ? null : Number(value));

export function toArmTotals(row: ArmTotalsRow): ExperimentArmTotals {
  return {
    version: Number(row.version),
    sessions: Number(row.sessions),
    calls: Number(row.calls ?? 0),
    succeeded: Number(row.succeeded ?? 0),
    failed: Number(row.failed ?? 0),
    unknown: Number(row.unknown ?? 0),
    averageDurationSecs: orNull(row.average_duration),
    averageCostCents: orNull(row.average_cost),
  };
}

export function toOutcomeCount(row: { version: number | string; field: string; value: string | null; count: number | string }): ExperimentOutcomeCount {
  return { version: Number(row.version), field: row.field, value: row.value, count: Number(row.count) };
}

export function toStateCount(row: { version: number | string; state: string; calls: number | string }): ExperimentStateCount {
  return { version: Number(row.version), state: row.state, calls: Number(row.calls) };
}
