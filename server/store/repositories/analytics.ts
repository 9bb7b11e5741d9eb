// A flow's traffic (docs/api.md#analytics): where its calls went, took which moves, and ended,
// counted in the database, never by reading sessions one by one: whole days summed from the
// pre-counted rows the ended calls were added to as they ended (rows/traffic-tally.ts), the rest
// (the partial days at a range's edges, the calls still connected, any range filtered by an
// outcome field) with GROUP BY over session_transitions (rows/transitions.ts) and the sessions.

/** Which of a flow's sessions are counted; every field is optional and they all apply together. */
export interface TrafficFilter {
  /** Created at or after (Unix seconds). */
  from?: number;
  /** Created before (Unix seconds). */
  to?: number;
  /** The published version the sessions ran, or 'draft' for the owner's draft; absent: every published version. */
  version?: number | 'draft';
  /** The call's analysed success; sessions not analysed match none. */
  success?: 'true' | 'false' | 'unknown';
  /** One field of the analysed outcome and the value it must have (compared as text; true/false for booleans). */
  outcome?: { field: string; value: string };
  /** The sessions an experiment assigned (docs/api.md#experiments). */
  experiment?: string;
  /** Of those, the ones given this arm (a version number). */
  arm?: number;
}

/** One flow of one account. */
export interface FlowRef {
  accountId: string;
  flowId: string;
}

export interface FlowTraffic {
  /** Sessions of the flow that connected (a token never used is no call). */
  calls: number;
  /** Per state, the calls that reached it at least once. */
  states: Array<{ state: string; calls: number }>;
  /** Per move (tool null: the keypad, a timeout, or a move stored before tools were), the calls that took it and how often it was taken. */
  transitions: Array<{ from: string | null; to: string; tool: string | null; calls: number; times: number }>;
  /** Where ended calls were when they ended, by end reason (state null: before the flow's first state). */
  ends: Array<{ state: string | null; reason: string; calls: number }>;
  /** Analysed success: true, false, 'unknown', and calls with no analysed success. */
  success: { true: number; false: number; unknown: number; none: number };
}

export interface TransitionSession {
  id: string;
  createdAt: number;
  startedAt: number | null;
  durationSecs: number | null;
  success: 'true' | 'false' | 'unknown' | null;
}

export interface AnalyticsRepository {
  /** The counts behind the traffic view of one flow (the caller checked it is the account's). */
  flowTraffic(flow: FlowRef, filter: TrafficFilter): Promise<FlowTraffic>;
  /**
   * The sessions that took one move (from null: reached `to` first), newest first, at most
   * `limit`, starting after the `after` position a previous page ended on.
   */
  transitionSessions(
    flow: FlowRef,
    move: { from: string | null; to: string },
    filter: TrafficFilter,
    limit: number,
    after: { createdAt: number; id: string } | null,
  ): Promise<TransitionSession[]>;
}
