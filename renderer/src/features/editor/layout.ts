// Where states sit on the canvas. A full layout (a flow opened without a saved layout, or the
// Auto-layout button) is dagre's layered drawing, top to bottom from the initial state; a state
// that appears later (added in the YAML, or by the API) is placed next to a state it connects
// to, without moving anything the designer arranged.
//
// dagre on a 200-state flow costs seconds when every edge goes in: each loop back to the start
// becomes a chain of dummy nodes across every rank, and ordering them is the expensive step.
// Back edges do not change which rank a state belongs in, so they are left out of the layout
// (found by a depth-first walk from the initial state); parallel edges collapse into one.
import dagre from '@dagrejs/dagre';
import type { StateCard, TransitionLink } from './graph.ts';

export interface XY {
  x: number;
  y: number;
}
export type Positions = Record<string, XY>;

/** Nodes are drawn at this fixed width (StateNode.svelte), so layout and drawing agree. */
export const NODE_WIDTH = 240;
const RANK_GAP = 90;
const NODE_GAP = 70;
const CHIP_ROW = 26;

/** The drawn height of a state's node, estimated from what it shows (measured ±10 px). */
export function estimateHeight(card: Pick<StateCard, 'excerpt' | 'tools'>): number {
  const header = 40;
  const excerptLines = card.excerpt ? Math.min(2, Math.ceil(card.excerpt.length / 34)) : 0;
  let rows = card.tools.length > 0 ? 1 : 0;
  let used = 0;
  for (const tool of card.tools) {
    const width = tool.name.length * 7 + 30;
    if (used > 0 && used + width > NODE_WIDTH - 24) {
      rows++;
      used = 0;
    }
    used += width + 4;
  }
  return header + excerptLines * 18 + rows * CHIP_ROW + 14;
}

/** The links that go forward from the initial state (depth-first), for ranking. */
export function forwardEdges(names: ReadonlyArray<string>, links: ReadonlyArray<TransitionLink>, initial: string | null): Array<[string, string]> {
  const out = new Map<string, string[]>();
  for (const link of links) {
    if (link.selfLoop) continue;
    const targets = out.get(link.source) ?? [];
    if (!targets.includes(link.target)) targets.push(link.target);
    out.set(link.source, targets);
  }
  const state = new Map<string, 'open' | 'done'>();
  const edges: Array<[string, string]> = [];
  // Iterative: a 500-state chain would overflow a recursive walk's stack in some engines.
  const walk = (root: string) => {
    const stack: Array<{ name: string; next: number }> = [{ name: root, next: 0 }];
    state.set(root, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const targets = out.get(top.name) ?? [];
      if (top.next >= targets.length) {
        state.set(top.name, 'done');
        stack.pop();
        continue;
      }
      const target = targets[top.next++]!;
      const seen = state.get(target);
      if (seen === 'open') continue; // a back edge: it closes a loop
      edges.push([top.name, target]);
      if (seen === undefined) {
        state.set(target, 'open');
        stack.push({ name: target, next: 0 });
      }
    }
  };
  if (initial !== null && names.includes(initial)) walk(initial);
  for (const name of names) if (!state.has(name)) walk(name);
  return edges;
}

/** Positions (top-left corners, as xyflow takes them) for every state. */
export function autoLayout(cards: ReadonlyArray<StateCard>, links: ReadonlyArray<TransitionLink>, initial: string | null): Positions {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'TB', nodesep: NODE_GAP, ranksep: RANK_GAP, marginx: 20, marginy: 20 });
  graph.setDefaultEdgeLabel(() => ({}));
  const heights = new Map<string, number>();
  for (const card of cards) {
    const height = estimateHeight(card);
    heights.set(card.name, height);
    graph.setNode(card.name, { width: NODE_WIDTH + selfLoopRoom(card.name, links), height });
  }
  for (const [from, to] of forwardEdges(cards.map((c) => c.name), links, initial)) graph.setEdge(from, to);
  dagre.layout(graph);
  const positions: Positions = {};
  for (const card of cards) {
    const node = graph.node(card.name);
    // dagre gives centres; the self-loop room is on the right of the node.
    const room = selfLoopRoom(card.name, links);
    positions[card.name] = { x: Math.round(node.x - (NODE_WIDTH + room) / 2), y: Math.round(node.y - heights.get(card.name)! / 2) };
  }
  return positions;
}

/** Self-loops are drawn on the right of their node; leave them room so labels do not collide. */
function selfLoopRoom(name: string, links: ReadonlyArray<TransitionLink>): number {
  const loops = links.filter((l) => l.selfLoop && l.source === name).length;
  return loops === 0 ? 0 : 60 + loops * 34;
}

/**
 * Every state gets a position: the given ones are kept, and a state without one goes below a
 * state that leads to it (or above one it leads to), else to the right of everything, moved on
 * until it overlaps nothing. Renames made in the YAML arrive here as a removed and an added
 * state; `renamed` carries the old position over.
 */
export function placeMissing(
  positions: Readonly<Positions>,
  cards: ReadonlyArray<StateCard>,
  links: ReadonlyArray<TransitionLink>,
  renamed: Readonly<Record<string, string>> = {},
): Positions {
  const out: Positions = {};
  const boxes: Array<{ x: number; y: number; w: number; h: number }> = [];
  const heightOf = new Map(cards.map((c) => [c.name, estimateHeight(c)]));
  for (const card of cards) {
    const known = positions[card.name] ?? (renamed[card.name] !== undefined ? positions[renamed[card.name]!] : undefined);
    if (known) {
      out[card.name] = { x: known.x, y: known.y };
      boxes.push({ x: known.x, y: known.y, w: NODE_WIDTH, h: heightOf.get(card.name)! });
    }
  }
  const overlaps = (x: number, y: number, h: number) =>
    boxes.some((b) => x < b.x + b.w + 30 && x + NODE_WIDTH + 30 > b.x && y < b.y + b.h + 30 && y + h + 30 > b.y);

  for (const card of cards) {
    if (out[card.name]) continue;
    const height = heightOf.get(card.name)!;
    const from = links.find((l) => !l.selfLoop && l.target === card.name && out[l.source]);
    const to = links.find((l) => !l.selfLoop && l.source === card.name && out[l.target]);
    let x: number;
    let y: number;
    let step: XY;
    if (from) {
      const parent = out[from.source]!;
      x = parent.x;
      y = parent.y + heightOf.get(from.source)! + RANK_GAP;
      step = { x: NODE_WIDTH + NODE_GAP, y: 0 };
    } else if (to) {
      const child = out[to.target]!;
      x = child.x;
      y = child.y - height - RANK_GAP;
      step = { x: NODE_WIDTH + NODE_GAP, y: 0 };
    } else {
      const right = boxes.reduce((max, b) => Math.max(max, b.x + b.w), -NODE_GAP);
      const top = boxes.reduce((min, b) => Math.min(min, b.y), Infinity);
      x = right + NODE_GAP;
      y = Number.isFinite(top) ? top : 0;
      step = { x: 0, y: 60 };
    }
    for (let tries = 0; overlaps(x, y, height) && tries < 500; tries++) {
      x += step.x;
      y += step.y;
    }
    out[card.name] = { x, y };
    boxes.push({ x, y, w: NODE_WIDTH, h: height });
  }
  return out;
}

/** Whether two position maps put the same states at the same places. */
export function samePositions(a: Readonly<Positions>, b: Readonly<Positions>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => b[k] !== undefined && a[k]!.x === b[k]!.x && a[k]!.y === b[k]!.y);
}

/**
 * A YAML edit that renames a state removes one name and adds another in one step; when that is
 * all that happened to the names, the new name is taken to be the old one renamed.
 */
export function renamedStates(before: ReadonlyArray<string>, after: ReadonlyArray<string>): Record<string, string> {
  const old = new Set(before);
  const now = new Set(after);
  const removed = before.filter((n) => !now.has(n));
  const added = after.filter((n) => !old.has(n));
  return removed.length === 1 && added.length === 1 ? { [added[0]!]: removed[0]! } : {};
}

/** `at`, or the nearest place right of or below it where a new node overlaps no state. */
export function freeSpot(positions: Readonly<Positions>, cards: ReadonlyArray<StateCard>, at: XY): XY {
  const heights = new Map(cards.map((c) => [c.name, estimateHeight(c)]));
  const height = 100;
  const overlaps = (x: number, y: number) =>
    Object.entries(positions).some(([name, p]) => x < p.x + NODE_WIDTH + 30 && x + NODE_WIDTH + 30 > p.x && y < p.y + (heights.get(name) ?? 120) + 30 && y + height + 30 > p.y);
  // Rings of growing distance: right, below, left, above; the first free one wins.
  for (let ring = 0; ring < 40; ring++) {
    const d = ring * 60;
    for (const [dx, dy] of [[d, 0], [0, d], [-d, 0], [0, -d], [d, d], [-d, d]] as const) {
      if (!overlaps(at.x + dx, at.y + dy)) return { x: Math.round(at.x + dx), y: Math.round(at.y + dy) };
    }
  }
  return at;
}
