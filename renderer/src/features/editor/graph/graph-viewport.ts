// Where the canvas looks: which states a flow opens on, the box that holds the whole flow (states,
// their loops and the labels of edges routed round them) and whether a view shows all of it.
// Pure: FlowGraph.svelte hands in xyflow's nodes and viewport and moves the view itself.
import type { EdgePath } from '../../../../../server/flow/graph/edge-routes.ts';
import type { FlowGraph } from '../../../../../server/flow/graph/graph.ts';
import { NODE_WIDTH, labelWidth, loopRoom, type XY } from '../../../../../server/flow/graph/layout.ts';

/** A drawn node as xyflow knows it: its place and, once drawn, its size. */
export interface PlacedNode {
  id: string;
  position: XY;
  measured?: { width?: number; height?: number };
}

export interface Size {
  width: number;
  height: number;
}

export interface Viewport extends XY {
  zoom: number;
}

/** A node not measured yet is taken as this tall. */
const UNMEASURED_HEIGHT = 100;

/**
 * A big flow opens on its start (or on the state it was opened at): that state and the states
 * that follow it, up to eight, readable. A small one (undefined) is fitted whole.
 */
export function openingStates(graph: FlowGraph, selected: string | null): Array<{ id: string }> | undefined {
  if (graph.cards.length <= 16) return undefined;
  const order = [selected !== null && graph.cards.some((c) => c.name === selected) ? selected : (graph.initial ?? graph.cards[0]!.name)];
  for (let i = 0; i < order.length && order.length < 8; i++) {
    for (const link of graph.links) if (link.source === order[i] && !order.includes(link.target)) order.push(link.target);
  }
  return order.slice(0, 8).map((id) => ({ id }));
}

/** Whether every node is inside a canvas of `size` seen through `view`. */
export function wholeFlowShown(nodes: ReadonlyArray<PlacedNode>, size: Size, view: Viewport): boolean {
  return nodes.every((n) => {
    const x = n.position.x * view.zoom + view.x;
    const y = n.position.y * view.zoom + view.y;
    const w = (n.measured?.width ?? NODE_WIDTH) * view.zoom;
    const h = (n.measured?.height ?? UNMEASURED_HEIGHT) * view.zoom;
    return x >= -1 && y >= -1 && x + w <= size.width + 1 && y + h <= size.height + 1;
  });
}

/**
 * The box to fit to show the whole flow, however big: its states with their loops, and the edges
 * routed round them with their labels, which can run outside the states' box. Never smaller than
 * 88 % of the canvas, so a small flow is shown at its size (no closer than 100 %), in the middle.
 * Null when there is nothing to show.
 */
export function wholeFlowBox(
  nodes: ReadonlyArray<PlacedNode>,
  graph: FlowGraph,
  paths: ReadonlyMap<string, EdgePath>,
  canvas: Size,
): (XY & Size) | null {
  let left = Infinity;
  let top = Infinity;
  let right = -Infinity;
  let bottom = -Infinity;
  const take = (x1: number, y1: number, x2: number, y2: number) => {
    left = Math.min(left, x1);
    top = Math.min(top, y1);
    right = Math.max(right, x2);
    bottom = Math.max(bottom, y2);
  };
  const cards = new Map(graph.cards.map((c) => [c.name, c]));
  for (const n of nodes) {
    const card = cards.get(n.id);
    const width = (n.measured?.width ?? NODE_WIDTH) + (card ? loopRoom(card) : 0);
    take(n.position.x, n.position.y, n.position.x + width, n.position.y + (n.measured?.height ?? UNMEASURED_HEIGHT));
  }
  for (const link of graph.links) {
    const path = paths.get(link.id);
    if (!path) continue;
    const half = labelWidth(link.tool, false) / 2;
    for (const corner of path.corners) take(corner.x - half, corner.y - 12, corner.x + half, corner.y + 12);
  }
  if (!Number.isFinite(left)) return null;
  const width = Math.max(right - left, canvas.width * 0.88);
  const height = Math.max(bottom - top, canvas.height * 0.88);
  return { x: (left + right) / 2 - width / 2, y: (top + bottom) / 2 - height / 2, width, height };
}

// Readable: a state's name drawn at least 11 CSS px tall on screen. A card's own text (the name
// at 13.5 px, the prompt at 12.5 px, the tool chips at 11.5 px) stops reading well below 60 %;
// there the cards show their name alone, large (StateNode's names-only look), which reads down to
// 11/36 ≈ 31 %.
/** On-screen size (CSS px) at which a state's name reads. */
export const READABLE_PX = 11;
/** The card's name font (StateNode .name), in flow px. */
export const CARD_NAME_PX = 13.5;
/** The large name of the names-only look (StateNode .big-name), in flow px. */
export const BIG_NAME_PX = 36;
/** Below this zoom the cards show their name alone, large, and hide their prompt and tools. */
export const NAMES_ONLY_BELOW = 0.6;
/** Where a big flow opens and where Fit stops on it: the large names at 12.6 px on screen. */
export const OVERVIEW_ZOOM = 0.35;
/** Where one state is brought to (search, a problem): its whole card reads. */
export const FOCUS_ZOOM = 1;
/** Above this many states a flow is big: it opens, and Fit ends, on the start (or the selection). */
export const BIG_FLOW_ABOVE = 100;

/** The size, on screen, of a state's name at `zoom` (in whichever look the cards have there). */
export function nameSizeOnScreen(zoom: number): number {
  return (zoom < NAMES_ONLY_BELOW ? BIG_NAME_PX : CARD_NAME_PX) * zoom;
}

export function namesReadable(zoom: number): boolean {
  return nameSizeOnScreen(zoom) >= READABLE_PX;
}

/** The zoom to bring one state to: the current one when names read there, else one where the card reads. */
export function focusZoom(current: number): number {
  return namesReadable(current) ? current : FOCUS_ZOOM;
}

/**
 * What Fit does: show the whole `box` (padding as a fraction of the canvas), or, on a big flow
 * whose whole would be drawn too small to read, stay at the overview zoom centred on one state.
 */
export function fitChoice(box: Size, canvas: Size, states: number, padding: number): 'whole' | 'centre' {
  if (states <= BIG_FLOW_ABOVE) return 'whole';
  const zoom = Math.min((canvas.width * (1 - 2 * padding)) / box.width, (canvas.height * (1 - 2 * padding)) / box.height);
  return zoom >= OVERVIEW_ZOOM ? 'whole' : 'centre';
}

/**
 * Where a big flow's canvas opens, in flow coordinates: a view of `screen` (CSS px) at `zoom`,
 * centred on the node it opens on (as xyflow's fit to that one node at a fixed zoom centres it).
 */
export function openingView(anchor: PlacedNode, screen: Size, zoom: number): XY & Size {
  const width = anchor.measured?.width ?? NODE_WIDTH;
  const height = anchor.measured?.height ?? UNMEASURED_HEIGHT;
  const span = { width: screen.width / zoom, height: screen.height / zoom };
  return { x: anchor.position.x + width / 2 - span.width / 2, y: anchor.position.y + height / 2 - span.height / 2, ...span };
}

/**
 * The nodes a big flow's canvas takes in first, so its first draw costs what `view` shows rather
 * than the whole flow: every node whose box meets `view`. The rest can follow in later frames
 * without changing what is drawn there.
 */
export function nodesInView(nodes: ReadonlyArray<PlacedNode>, view: XY & Size): Set<string> {
  const ids = new Set<string>();
  for (const n of nodes) {
    const right = n.position.x + (n.measured?.width ?? NODE_WIDTH);
    const bottom = n.position.y + (n.measured?.height ?? UNMEASURED_HEIGHT);
    if (n.position.x < view.x + view.width && right > view.x && n.position.y < view.y + view.height && bottom > view.y) ids.add(n.id);
  }
  return ids;
}

/** The state a big flow's view is centred on: the selected one, else the start, else the first. */
export function anchorState(graph: FlowGraph, selected: string | null): string | null {
  if (selected !== null && graph.cards.some((c) => c.name === selected)) return selected;
  return graph.initial ?? graph.cards[0]?.name ?? null;
}

export interface SearchHit {
  name: string;
  /** The card prompt, when the match is in it. */
  excerpt: string;
}

/**
 * States matching what was typed in the canvas search (case-insensitive), best first: the name
 * itself, names starting with it, names containing it, then card prompts containing it.
 */
export function searchStates(graph: FlowGraph, typed: string, limit = 8): SearchHit[] {
  const q = typed.trim().toLowerCase();
  if (q === '') return [];
  const rank = (name: string, prompt: string): number => {
    const n = name.toLowerCase();
    if (n === q) return 0;
    if (n.startsWith(q)) return 1;
    if (n.includes(q)) return 2;
    return prompt.toLowerCase().includes(q) ? 3 : -1;
  };
  return graph.cards
    .map((c, i) => ({ c, i, r: rank(c.name, c.excerpt) }))
    .filter((x) => x.r >= 0)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, limit)
    .map(({ c }) => ({ name: c.name, excerpt: c.excerpt }));
}
