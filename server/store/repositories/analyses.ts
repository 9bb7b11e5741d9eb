// Each ended session's analysis (docs/api.md#outcome-and-success): what the call produced and
// whether it succeeded, filled in after the session is stored as ended, as a durable job.
//
// A row is opened for every ended session of a flow: 'none' when the flow declares no outcome or
// success, 'pending' when it does; 'done' once the result is stored. A pending analysis is
// claimed by the node working on it until a time (renewed as it goes); a node that dies leaves
// its claim to run out, then any node takes it. On sql.js one process holds the data dir, so a
// claim of another node id is one an earlier run left when it died, and is taken at once.
// complete() stores the result and puts the `session.analyzed` deliveries in the webhook outbox in
// one write, so a crash never keeps one without the other.
import type { NewWebhookDelivery } from './webhooks.ts';

export type AnalysisState = 'pending' | 'done' | 'none';
export type AnalysisSuccess = 'true' | 'false' | 'unknown';

export interface SessionAnalysis {
  sessionId: string;
  accountId: string;
  state: AnalysisState;
  /** The call's success once done; null when the flow declares no success criteria. */
  success: AnalysisSuccess | null;
  /** The stored result (outcome and success as the API shows them) once done. */
  result: Record<string, unknown> | null;
  createdAt: number;
  doneAt: number | null;
}

export interface AnalysesRepository {
  /** Opens an ended session's analysis; a second open of the same session changes nothing. */
  open(sessionId: string, accountId: string, state: 'pending' | 'none'): Promise<void>;
  /**
   * Claims a pending analysis for this node until `until` (Unix seconds), or renews this node's
   * claim. False when it is not pending, or another node's claim still holds.
   */
  claim(sessionId: string, until: number): Promise<boolean>;
  /** Stores the result and enqueues its deliveries in one write, if still pending; says whether it did. */
  complete(sessionId: string, result: Record<string, unknown>, success: AnalysisSuccess | null, deliveries: readonly NewWebhookDelivery[]): Promise<boolean>;
  get(sessionId: string): Promise<SessionAnalysis | null>;
  /** Each session's success, for a page of the sessions list (absent: none stored). */
  successOf(sessionIds: readonly string[]): Promise<Map<string, AnalysisSuccess>>;
  /** Each analysed session's outcome values, for a page of the sessions list (absent: none stored). */
  outcomesOf(sessionIds: readonly string[]): Promise<Map<string, Record<string, string | number | boolean | null>>>;
  /**
   * What is left to do, oldest first, at most `limit`: pending analyses no live claim holds, and
   * with `unopened` (at start: it reads the sessions that ended after `since`) the ended sessions
   * of a flow with no analysis opened (a crash between the end and the open).
   */
  unfinished(since: number, limit: number, unopened: boolean): Promise<string[]>;
}
