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
