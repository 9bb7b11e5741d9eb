// Where the canvas looks: which states a flow opens on, the box that holds the whole flow (states,
// their loops and the labels of edges routed round them) and whether a view shows all of it.
// Pure: FlowGraph.svelte hands in xyflow's nodes and viewport and moves the view itself.
import type { EdgePath } from './edge-routes.ts';
import type { FlowGraph } from './graph.ts';
import { NODE_WIDTH, labelWidth, loopRoom, type XY } from './layout.ts';

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
