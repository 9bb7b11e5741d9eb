// The flow worker's layout job (also run on the page where there is no worker): dagre's positions
// and where each edge runs on them. Routing every edge of a big flow costs tens of ms, so at open
// and on Auto-layout it is done in the worker beside the layout, not on the page while the
// canvas is drawn (FlowGraph uses these routes while the graph and positions are the ones they
// were made for).
import { routeEdges, type EdgePath } from './edge-routes.ts';
import type { StateCard, TransitionLink } from './graph.ts';
import { autoLayout, type Positions } from './layout.ts';

export interface LaidOut {
  positions: Positions;
  /** Edge id → its route, for exactly these positions. */
  paths: Map<string, EdgePath>;
}

export function layOut(cards: ReadonlyArray<StateCard>, links: ReadonlyArray<TransitionLink>, initial: string | null): LaidOut {
  const positions = autoLayout(cards, links, initial);
  return { positions, paths: routeEdges(cards, links, positions) };
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
