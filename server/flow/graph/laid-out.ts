// The flow worker's layout and open jobs (also run on the page where there is no worker): dagre's
// positions and where each edge runs on them. Routing every edge of a big flow costs tens of ms,
// so at open and on Auto-layout it is done in the worker beside the layout, not on the page while
// the canvas is drawn (FlowGraph uses these routes while the graph and positions are the ones they
// were made for). Opening a big flow is one job: analysis, graph and placing every state (dagre's
// layout, or the positions saved with the flow) without a trip through the page between them. A keystroke in a big flow is routed there too, on the positions
// the page had when it sent the text (routeAnalysed): routing 1,000 edges was the largest part of
// the page's task applying the worker's answer.
import type { Analysis } from './analyze.ts';
import { routeEdges, type EdgePath } from './edge-routes.ts';
import { EMPTY_GRAPH, deriveGraph, type FlowGraph, type StateCard, type TransitionLink } from './graph.ts';
import { autoLayout, placeMissing, type Positions } from './layout.ts';

export interface LaidOut {
  positions: Positions;
  /** Edge id → its route, for exactly these positions. */
  paths: Map<string, EdgePath>;
}

export function layOut(cards: ReadonlyArray<StateCard>, links: ReadonlyArray<TransitionLink>, initial: string | null): LaidOut {
  const positions = autoLayout(cards, links, initial);
  return { positions, paths: routeEdges(cards, links, positions) };
}

export interface Opened {
  analysis: Analysis;
  /** The graph of the analysis, as the page derives it for a flow it opens. */
  graph: FlowGraph;
  /**
   * Where every state goes, with the edges routed there: dagre's layout for a flow never laid out
   * (none of its states has a saved position), else the saved positions with the states added
   * since placed beside the ones they connect to. Null for a flow without states.
   */
  laidOut: LaidOut | null;
}

/** The open job, after the text's analysis: its graph, each state's place (from `saved`, else dagre's) and the edges routed on them. */
export function openAnalysed(analysis: Analysis, saved: Positions): Opened {
  const graph = deriveGraph(analysis.data, analysis.diagnostics);
  if (graph.cards.length === 0) return { analysis, graph, laidOut: null };
  if (!graph.cards.some((card) => saved[card.name])) return { analysis, graph, laidOut: layOut(graph.cards, graph.links, graph.initial) };
  const positions = placeMissing(saved, graph.cards, graph.links);
  return { analysis, graph, laidOut: { positions, paths: routeEdges(graph.cards, graph.links, positions) } };
}

/**
 * Where the edges of an analysis's graph run on `positions`, when they place exactly its states
 * (else null: the page routes them once it has placed the rest). `previous`: the graph derived
 * last, whose unchanged cards and links are kept; the graph is handed back for the next call.
 */
export function routeAnalysed(
  analysis: Analysis,
  positions: Positions | null,
  previous: FlowGraph = EMPTY_GRAPH,
): { graph: FlowGraph; paths: Map<string, EdgePath> | null } {
  if (!positions || !analysis.data) return { graph: previous, paths: null };
  const graph = deriveGraph(analysis.data, analysis.diagnostics, previous);
  const placed = graph.cards.every((card) => positions[card.name]) && Object.keys(positions).length === graph.cards.length;
  return { graph, paths: placed ? routeEdges(graph.cards, graph.links, positions) : null };
}

/** Edge routes made elsewhere (with a layout, in the flow worker), for exactly this graph and these positions. */
export interface EdgeRoutes {
  cards: ReadonlyArray<StateCard>;
  links: ReadonlyArray<TransitionLink>;
  positions: Positions;
  paths: Map<string, EdgePath>;
}

/** Where the edges run: the routes made with the layout while they are for this graph and these positions, else routed here. */
export function edgePaths(
  cards: ReadonlyArray<StateCard>,
  links: ReadonlyArray<TransitionLink>,
  positions: Positions,
  made: EdgeRoutes | null,
): Map<string, EdgePath> {
  if (made && made.cards === cards && made.links === links && made.positions === positions) return made.paths;
  return routeEdges(cards, links, positions);
}
