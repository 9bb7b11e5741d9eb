// The derived graph as xyflow nodes and edges. xyflow keeps what it measured about a node on
// the node object (and skips re-measuring an object it already knows), so a node whose card,
// place, selection and overlay are unchanged is handed back as the very same object; a changed
// one is a copy of the previous object (keeping `measured`) with the new fields.
import type { Edge, Node, Position } from '@xyflow/svelte';
import { readingOrder, type FlowGraph, type StateCard, type TransitionLink } from '../../../../../server/flow/graph/graph.ts';
import type { TalkMarks, TrafficOnState } from './marks.ts';
import { directionOf, type EdgeDirection, type EdgePath } from '../../../../../server/flow/graph/edge-routes.ts';
import { NODE_WIDTH, estimateHeight, type Positions } from '../../../../../server/flow/graph/layout.ts';

export interface StateNodeData extends Record<string, unknown> {
  card: StateCard;
  /** The text does not read as YAML: the node shows the last readable version. */
  stale: boolean;
  /** Lit by test-talk: the state the session is in now (or ended in), or one it went through. */
  talk: 'active' | 'visited' | null;
  /** The lit path is the trace of a session that ended, not a live one. */
  pastRun: boolean;
  /** The steps at which test-talk entered this state. */
  visits: number[];
  /** No flow test reaches this state (the Tests tab's last run). */
  untested?: boolean;
  /** Failed simulated-caller runs that ended in this state, of `simulatedRuns` (the Tests tab's last run). */
  stuck?: number;
  simulatedRuns?: number;
  /** The Traffic overlay's counts for this state; null when the overlay is off or no call reached it. */
  traffic?: TrafficOnState | null;
}

/**
 * How an edge is drawn: down from the bottom of its state into the top of the next; across from
 * side to side to a state on the same row (east or west); a move back up (a loop to an earlier
 * state) routed round the states in between (edge-routes.ts); a staying tool as a loop on the
 * right.
 */
export type EdgeRoute = EdgeDirection | 'loop';

export interface TransitionEdgeData extends Record<string, unknown> {
  link: TransitionLink;
  route: EdgeRoute;
  /** Where it runs and where its label sits, clear of the states; null for a self-loop. */
  path: EdgePath | null;
  /** Estimated drawn heights of the two states, for anchoring side routes at mid-height. */
  sourceHeight: number;
  targetHeight: number;
  /** The steps at which test-talk moved along this edge. */
  taken: number[];
  /** For a self-loop: how many times test-talk called its staying tool. */
  stays: number;
  /** The lit path is the trace of a session that ended. */
  pastRun: boolean;
  /** The latest move of the session. */
  last: boolean;
  /** No flow test takes this transition (the Tests tab's last run). */
  untested?: boolean;
  /** Simulated-caller runs that took it, of `simulatedRuns` (the Tests tab's last run). */
  simulated?: number;
  simulatedRuns?: number;
  /** The Traffic overlay: calls that took it (null: the overlay is off), and its share of the busiest link's (0–1). */
  traffic?: { calls: number; weight: number } | null;
}

export type StateNode = Node<StateNodeData, 'state'>;
export type TransitionEdge = Edge<TransitionEdgeData, 'transition'>;

export const NO_MARKS: TalkMarks = { active: null, live: false, visits: new Map(), taken: new Map(), loops: new Map(), lastLink: null };

const NO_STEPS: number[] = [];
/** A state no counted call reached, while the Traffic overlay is on. */
const NO_TRAFFIC: TrafficOnState = { calls: 0, share: 0, ends: [] };

function sameSteps(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export function buildNodes(
  graph: FlowGraph,
  positions: Positions,
  /** The selected state and any chosen with it (a group to move or delete together). */
  selected: ReadonlyArray<string | null>,
  marks: TalkMarks,
  stale: boolean,
  previous: ReadonlyArray<StateNode>,
  /** Give each node its size and handles before it is drawn (presized()); for big flows. */
  presize = false,
  /** Only these states (the part of a big flow the canvas takes in first); null: all. */
  only: ReadonlySet<string> | null = null,
): StateNode[] {
  const before = new Map(previous.map((n) => [n.id, n]));
  const nodes: StateNode[] = [];
  const cards = new Map(graph.cards.map((c) => [c.name, c]));
  // Drawn in reading order, which is the order Tab visits them in.
  for (const name of readingOrder(graph)) {
    if (only && !only.has(name)) continue;
    const card = cards.get(name)!;
    const position = positions[card.name];
    // Not placed yet (a full layout is on its way): drawn once it has a place.
    if (!position) continue;
    const visits = marks.visits.get(card.name) ?? NO_STEPS;
    const talk = marks.active === card.name ? 'active' : visits.length > 0 ? 'visited' : null;
    const pastRun = talk !== null && !marks.live;
    const isSelected = selected.includes(card.name);
    const untested = marks.untested?.states.has(card.name) ?? false;
    const simulatedRuns = marks.untested?.simulated?.runs ?? 0;
    const stuck = marks.untested?.simulated?.stuck.get(card.name) ?? 0;
    const traffic = marks.traffic ? (marks.traffic.states.get(card.name) ?? NO_TRAFFIC) : null;
    const old = before.get(card.name);
    if (
      old &&
      old.data.card === card &&
      (old.data.traffic ?? null) === traffic &&
      (old.data.untested ?? false) === untested &&
      (old.data.stuck ?? 0) === stuck &&
      (old.data.simulatedRuns ?? 0) === simulatedRuns &&
      old.data.stale === stale &&
      old.data.talk === talk &&
      old.data.pastRun === pastRun &&
      sameSteps(old.data.visits, visits) &&
      old.position.x === position.x &&
      old.position.y === position.y &&
      (old.selected ?? false) === isSelected &&
      (old.handles !== undefined) === presize
    ) {
      nodes.push(old);
      continue;
    }
    const node: StateNode = {
      ...old,
      id: card.name,
      type: 'state',
      position,
      selected: isSelected,
      deletable: false,
      // Arrow keys move a selected node; a stale graph is read-only.
      draggable: !stale,
      connectable: !stale,
      ariaLabel: `State ${card.name}${card.initial ? ', start' : ''}`,
      data: { card, stale, talk, pastRun, visits, untested, stuck, simulatedRuns, traffic },
    };
    nodes.push(presize ? presized(node, estimateHeight(card)) : withoutPresize(node));
  }
  return nodes;
}

// On a big flow the canvas draws only the states in view (xyflow's onlyRenderVisibleElements).
// xyflow still draws every node once to measure it unless the node comes with its size and its
// handles, so a big flow's nodes carry both, from the estimated height until the drawn node is
// measured. The handles are where StateNode's CSS puts them (border-box, a 1.5 px border): the
// drop target covers the node inside its border, the 14 px connector dot sits on the middle of
// the bottom border. Edges of states out of view run from these.
/** Above this many states the canvas draws only what is in view. */
export const DRAW_IN_VIEW_ONLY_ABOVE = 100;
const BORDER = 1.5;
const CONNECTOR = 14;

/** `node` with its size and handles, for `height` (measured, or else estimated). */
export function presized<N extends Node>(node: N, estimated: number): N {
  const height = node.measured?.height ?? estimated;
  const width = node.measured?.width ?? NODE_WIDTH;
  return {
    ...node,
    measured: { width, height },
    handles: [
      { id: 'in', type: 'target', position: 'top' as Position, x: BORDER, y: BORDER, width: width - 2 * BORDER, height: height - 2 * BORDER },
      { id: 'out', type: 'source', position: 'bottom' as Position, x: width / 2 - CONNECTOR / 2, y: height - BORDER - CONNECTOR / 2, width: CONNECTOR, height: CONNECTOR },
    ],
  };
}

function withoutPresize(node: StateNode): StateNode {
  if (node.handles === undefined) return node;
  const { handles: _handles, ...rest } = node;
  return rest;
}

/**
 * After xyflow measured drawn nodes of a big flow: the nodes whose handles were placed for
 * another height, placed again for the measured one (else a node's bottom handle, and the edges
 * leaving it, would stay where the estimate put them); null when every node agrees.
 */
export function remeasuredHandles<N extends Node>(nodes: ReadonlyArray<N>): N[] | null {
  let fixed: N[] | null = null;
  nodes.forEach((node, i) => {
    const connector = node.handles?.find((h) => h.id === 'out');
    const height = node.measured?.height;
    if (!connector || height === undefined || connector.y === height - BORDER - CONNECTOR / 2) return;
    fixed ??= [...nodes];
    fixed[i] = presized(node, height);
  });
  return fixed;
}

export function buildEdges(
  graph: FlowGraph,
  positions: Positions,
  marks: TalkMarks,
  previous: ReadonlyArray<TransitionEdge>,
  /** routeEdges() of the same graph and positions. */
  paths: ReadonlyMap<string, EdgePath> = new Map(),
): TransitionEdge[] {
  const before = new Map(previous.map((e) => [e.id, e]));
  const heights = new Map(graph.cards.map((c) => [c.name, estimateHeight(c)]));
  const edges: TransitionEdge[] = [];
  for (const link of graph.links) {
    if (!positions[link.source] || !positions[link.target]) continue;
    const taken = marks.taken.get(link.id) ?? NO_STEPS;
    const stays = marks.loops.get(link.id) ?? 0;
    const pastRun = !marks.live && (taken.length > 0 || stays > 0);
    const last = marks.lastLink === link.id;
    const untested = marks.untested?.links.has(link.id) ?? false;
    const simulatedRuns = marks.untested?.simulated?.runs ?? 0;
    const simulated = marks.untested?.simulated?.links.get(link.id) ?? 0;
    const trafficCalls = marks.traffic ? (marks.traffic.links.get(link.id) ?? 0) : null;
    const trafficWeight = marks.traffic && trafficCalls ? trafficCalls / Math.max(1, marks.traffic.busiestLink) : 0;
    const route = routeOf(link, positions);
    const drawn = paths.get(link.id) ?? null;
    const sourceHeight = heights.get(link.source)!;
    const targetHeight = heights.get(link.target)!;
    const old = before.get(link.id);
    if (
      old &&
      old.data!.link === link &&
      old.data!.route === route &&
      samePath(old.data!.path, drawn) &&
      old.data!.sourceHeight === sourceHeight &&
      old.data!.targetHeight === targetHeight &&
      old.data!.last === last &&
      (old.data!.untested ?? false) === untested &&
      (old.data!.simulated ?? 0) === simulated &&
      (old.data!.traffic?.calls ?? null) === trafficCalls &&
      (old.data!.traffic?.weight ?? 0) === trafficWeight &&
      (old.data!.simulatedRuns ?? 0) === simulatedRuns &&
      old.data!.stays === stays &&
      old.data!.pastRun === pastRun &&
      sameSteps(old.data!.taken, taken)
    ) {
      edges.push(old);
      continue;
    }
    edges.push({
      id: link.id,
      type: 'transition',
      source: link.source,
      target: link.target,
      // Every edge hangs on the two real handles; TransitionEdge draws side routes and loops
      // from them (fewer handles: each is measured by xyflow, 200 states × 6 cost ~0.2 s).
      sourceHandle: 'out',
      targetHandle: 'in',
      deletable: false,
      markerEnd: { type: 'arrowclosed', width: 18, height: 18 },
      ariaLabel: link.selfLoop ? `${link.tool}: stays in ${link.source}` : `${link.tool}: ${link.source} to ${link.target}`,
      data: {
        link, route, path: drawn, sourceHeight, targetHeight, taken, stays, pastRun, last, untested, simulated, simulatedRuns,
        traffic: trafficCalls === null ? null : { calls: trafficCalls, weight: trafficWeight },
      },
    });
  }
  return edges;
}

/** Which way an edge goes, from where its two states are drawn (top-left corners). */
export function routeOf(link: TransitionLink, positions: Positions): EdgeRoute {
  return link.selfLoop ? 'loop' : directionOf(positions[link.source]!, positions[link.target]!);
}

function samePath(a: EdgePath | null, b: EdgePath | null): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return (
    a.label.segment === b.label.segment &&
    a.label.t === b.label.t &&
    a.corners.length === b.corners.length &&
    a.corners.every((c, i) => c.x === b.corners[i]!.x && c.y === b.corners[i]!.y)
  );
}

/** What edge labels can ask of the graph (a Svelte context set by FlowGraph). */
export interface GraphActions {
  /** A transition's label was chosen: show its tool in the inspector. */
  activateLink(link: TransitionLink): void;
  /** Zoomed out past where a card's text reads: the cards show their name alone, large. */
  readonly namesOnly: boolean;
  /** Collapse a group into one node, or expand it again (groups.ts). */
  toggleGroup(group: string): void;
}
export const GRAPH_ACTIONS = Symbol('graph-actions');

/** A connection dragged on the canvas, waiting for the designer to say which tool makes it. */
export interface ConnectRequest {
  source: string;
  /** null: dropped on empty canvas, where a new state is made. */
  target: string | null;
  /** Where it was dropped: on screen (px inside the canvas) and on the canvas (flow coordinates). */
  screen: { x: number; y: number };
  flow: { x: number; y: number };
}

export interface ConnectChoice {
  tool: string;
  /** For a new tool; null when an existing tool was chosen. */
  description: string | null;
  /** For a drop on empty canvas: the state to create. */
  newState: string | null;
}
