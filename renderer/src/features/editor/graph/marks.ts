// What the canvas paints over the graph (server/flow/graph/graph.ts): the test-talk's path, what
// no flow test reaches, and the Traffic overlay's counts of real calls.
import type { TalkOverlay } from '../../talk/talk-overlay.ts';
import type { TransitionLink } from '../../../../../server/flow/graph/graph.ts';

export interface TalkMarks {
  active: string | null;
  /** A session is running; false for the trace of one that ended (or for no trace at all). */
  live: boolean;
  /** 1-based step numbers at which each state was entered (the initial state is step 1). */
  visits: Map<string, number[]>;
  /** Link id → step numbers at which the move along it was taken (the move into step n). */
  taken: Map<string, number[]>;
  /** Self-loop link id → how many times its staying tool was called. */
  loops: Map<string, number>;
  /** The link of the latest call (a move or a stay), animated on the graph while live. */
  lastLink: string | null;
  /**
   * What no flow test reaches, from the Tests tab's last run: painted apart from the talk's path
   * (teal) and from errors (red), so a designer sees where the tests have gaps.
   */
  untested?: {
    states: ReadonlySet<string>;
    links: ReadonlySet<string>;
    /** The simulated callers' runs: how many took each link (by id), and how many failed runs ended in each state. */
    simulated?: { runs: number; links: ReadonlyMap<string, number>; stuck: ReadonlyMap<string, number> } | null;
  } | null;
  /** The Traffic overlay: real calls' counts (GET /v1/analytics/flows/{id}), painted apart from the talk's path. */
  traffic?: TrafficMarks | null;
}

export interface TrafficMarks {
  /** The calls counted: each state's share is of these. */
  calls: number;
  /** State → what its card shows (one object per state, so an unchanged card keeps its node). */
  states: ReadonlyMap<string, TrafficOnState>;
  /** Link id → calls that took it. */
  links: ReadonlyMap<string, number>;
  /** The most calls any link carries, for edge widths. */
  busiestLink: number;
}

export interface TrafficOnState {
  /** Calls that reached it, and their share of all the calls counted (0–1). */
  calls: number;
  share: number;
  /** Where ended calls were when they ended here, by end reason as the card says it, most first. */
  ends: ReadonlyArray<{ reason: string; calls: number }>;
}

/** How the overlay names an end reason on a state (the reasons sessions record; others as they are). */
export function endReasonLabel(reason: string): string {
  const known: Record<string, string> = {
    caller_hung_up: 'hung up',
    client_disconnected: 'hung up',
    client_ended: 'hung up',
    transferred: 'transferred',
    transfer_failed: 'transfer failed',
    flow_ended: 'ended by the flow',
    agent_ended: 'ended by the flow',
    voicemail: 'voicemail',
    idle: 'idle',
    max_duration: 'too long',
    error: 'error',
    server_shutdown: 'server stopped',
    server_restarted: 'server stopped',
    credits_exhausted: 'out of credits',
  };
  return known[reason] ?? reason.replaceAll('_', ' ');
}

/**
 * The traffic's counts on the graph's links. A move is drawn on the link of its tool from its
 * state; a move without a tool (the keypad, a timeout, or one stored before tools were) on the
 * first link between the two states. A move no link draws (a state renamed since) is left out.
 */
export function trafficMarks(
  traffic: { calls: number; states: ReadonlyArray<{ state: string; calls: number }>; transitions: ReadonlyArray<{ from: string | null; to: string; tool: string | null; calls: number }>; ends: ReadonlyArray<{ state: string | null; reason: string; calls: number }> },
  links: ReadonlyArray<TransitionLink>,
): TrafficMarks {
  // One pass over the links into two lookups, so each move is found without scanning them.
  const bySourceTool = new Map<string, TransitionLink>();
  const firstBetween = new Map<string, TransitionLink>();
  for (const l of links) {
    if (!l.branch) bySourceTool.set(`${l.source}\u0000${l.tool}`, l);
    const between = `${l.source}\u0000${l.target}`;
    if (!l.selfLoop && !firstBetween.has(between)) firstBetween.set(between, l);
  }
  const linked = new Map<string, number>();
  for (const move of traffic.transitions) {
    if (move.from === null) continue;
    const link =
      (move.tool !== null ? bySourceTool.get(`${move.from}\u0000${move.tool}`) : undefined) ??
      firstBetween.get(`${move.from}\u0000${move.to}`);
    if (link && link.target === move.to) linked.set(link.id, (linked.get(link.id) ?? 0) + move.calls);
  }
  const ends = new Map<string, Array<{ reason: string; calls: number }>>();
  for (const end of traffic.ends) {
    if (end.state === null) continue;
    const list = ends.get(end.state) ?? ends.set(end.state, []).get(end.state)!;
    const label = endReasonLabel(end.reason);
    const same = list.find((e) => e.reason === label);
    if (same) same.calls += end.calls;
    else list.push({ reason: label, calls: end.calls });
  }
  for (const list of ends.values()) list.sort((a, b) => b.calls - a.calls);
  const states = new Map<string, TrafficOnState>();
  for (const { state, calls } of traffic.states) states.set(state, { calls, share: traffic.calls > 0 ? calls / traffic.calls : 0, ends: ends.get(state) ?? [] });
  // A call that ended before reaching any state the counts name (none normally): its end stays off the graph.
  for (const [state, list] of ends) if (!states.has(state)) states.set(state, { calls: 0, share: 0, ends: list });
  return { calls: traffic.calls, states, links: linked, busiestLink: Math.max(0, ...linked.values()) };
}

/**
 * Where the talk overlay lights the graph. Moves are matched to the accepted calls that made
 * them, so the edge of the tool actually called is lit even when several tools connect the same
 * two states; a move the server made without a call is drawn on the first link between them.
 * Staying calls light their self-loop and count.
 */
export function talkMarks(overlay: TalkOverlay, links: ReadonlyArray<TransitionLink>): TalkMarks {
  const visits = new Map<string, number[]>();
  const taken = new Map<string, number[]>();
  const loops = new Map<string, number>();
  overlay.trail.forEach((state, i) => visits.set(state, [...(visits.get(state) ?? []), i + 1]));
  const byTool = (from: string, tool: string) => links.find((l) => l.source === from && l.tool === tool);
  const goes = overlay.moves.filter((m) => m.from !== m.to);
  let next = 0;
  for (let i = 1; i < overlay.trail.length; i++) {
    const from = overlay.trail[i - 1]!;
    const to = overlay.trail[i]!;
    // The next call that moved from → to, if the trail's step was made by one.
    const call = goes.findIndex((m, k) => k >= next && m.from === from && m.to === to);
    if (call >= 0) next = call + 1;
    const link = (call >= 0 ? byTool(from, goes[call]!.tool) : undefined) ?? links.find((l) => l.source === from && l.target === to && !l.selfLoop);
    if (link) taken.set(link.id, [...(taken.get(link.id) ?? []), i + 1]);
  }
  for (const move of overlay.moves) {
    if (move.from !== move.to) continue;
    const link = byTool(move.from, move.tool);
    if (link?.selfLoop) loops.set(link.id, (loops.get(link.id) ?? 0) + 1);
  }
  const last = overlay.live && overlay.lastMove ? overlay.lastMove : null;
  const lastLink = last ? (byTool(last.from, last.tool)?.id ?? null) : null;
  return { active: overlay.activeState, live: overlay.live, visits, taken, loops, lastLink };
}
