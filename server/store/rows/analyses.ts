// A session_analyses row as both stores read it (repositories/analyses.ts).
import type { AnalysisState, AnalysisSuccess, SessionAnalysis } from '../repositories/analyses.ts';

export interface AnalysisRow {
  session_id: string;
  account_id: string;
  state: string;
  success: string | null;
  result: string | null;
  created_at: number;
  done_at: number | null;
}

export const ANALYSIS_COLUMNS = 'session_id, account_id, state, success, result, created_at, done_at';

export function toAnalysis(row: AnalysisRow): SessionAnalysis {
  return {
    sessionId: row.session_id,
    accountId: row.account_id,
    state: row.state as AnalysisState,
    success: row.success as AnalysisSuccess | null,
    result: row.result === null ? null : (JSON.parse(row.result) as Record<string, unknown>),
    createdAt: Number(row.created_at),
    doneAt: row.done_at === null ? null : Number(row.done_at),
  };
}

/** The outcome values of stored analysis results (the `result` column), by session. */
export function outcomeValues(rows: ReadonlyArray<{ session_id: string; result: string }>): Map<string, Record<string, string | number | boolean | null>> {
  const found = new Map<string, Record<string, string | number | boolean | null>>();
  for (const row of rows) {
    const values = (JSON.parse(row.result) as { outcome?: { values?: unknown } | null }).outcome?.values;
    if (values && typeof values === 'object' && !Array.isArray(values)) found.set(row.session_id, values as Record<string, string | number | boolean | null>);
  }
  return found;
}
