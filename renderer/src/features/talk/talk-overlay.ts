// What test-talk tells the graph while a conversation runs: the state it is in now and the path it
// took to get there, so the editor can light up the node and trace the edges as the session moves.
// After the session the overlay stays (live: false) as the trace of a past run, until the next
// Talk, "Clear", or an edit of the flow.
export interface TalkMove {
  from: string;
  to: string;
  tool: string;
}

export interface TalkOverlay {
  /** True while a test-talk session is connected. */
  live: boolean;
  /** The state the session is in now; null before it starts. */
  activeState: string | null;
  /** Every state entered, in order, starting with the initial one (repeats kept). */
  trail: string[];
  /** Every accepted tool call, in order: moves (from ≠ to) and stays (from = to). */
  moves: TalkMove[];
  /** The last move, for animating its edge: the tool that made it, from → to. */
  lastMove: TalkMove | null;
}

export const NO_TALK: TalkOverlay = { live: false, activeState: null, trail: [], moves: [], lastMove: null };
