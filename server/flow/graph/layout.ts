// Where states sit on the canvas. A full layout (a flow opened without a saved layout, or the
// Auto-layout button) is dagre's layered drawing, top to bottom from the initial state; a state
// that appears later (added in the YAML, or by the API) is placed next to a state it connects
// to, without moving anything the designer arranged.
//
// dagre on a 200-state flow costs seconds when every edge goes in: each loop back to the start
// becomes a chain of dummy nodes across every rank, and ordering them is the expensive step.
// (That ordering is now layer-order.ts, the same algorithm without graphlib: see there.)
// Back edges do not change which rank a state belongs in, so they are left out of the layout
// (found by a depth-first walk from the initial state); parallel edges collapse into one.
//
// A long flow is many ranks deep and few states wide: one tall column that no view can show
// readably. Its ranks wrap, like lines of text: the first band of ranks is a column, the next
// band continues beside it at the top, and so on, with as many bands as make the whole about as
// wide as a canvas is. The gaps between bands are lanes for the edges that go from one band to
// the next (edge-routes.ts routes them there).
import dagre from '@dagrejs/dagre';
import type { StateCard, TransitionLink } from './graph.ts';
import { orderLayers } from './layer-order.ts';

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
/** Between bands of wrapped ranks: room for the edges that run from one band to the next. */
export const BAND_GAP = 170;
/** The width a wrapped layout aims at, for each unit of height (a canvas is wider than tall). */
const WRAP_ASPECT = 1.6;

/** The drawn width of a tool's label on its edge (11.5 px monospace, padded), estimated. */
export function labelWidth(tool: string, selfLoop: boolean): number {
  return tool.length * 7 + (selfLoop ? 34 : 20);
}

/**
 * Room right of a state for its self-loops and their labels (TransitionEdge draws the loops
 * nested there, their labels in one column beyond the outermost loop).
 */
export function loopRoom(card: Pick<StateCard, 'tools'>): number {
  const staying = card.tools.filter((t) => t.kind === 'stay');
  if (staying.length === 0) return 0;
  const outermost = 48 + (staying.length - 1) * 34;
  return Math.round(outermost * 0.75 + 8 + Math.max(...staying.map((t) => labelWidth(t.name, true))) + 8);
}

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

/**
 * Above this many states dagre ranks the states by a tight tree and skips the network simplex
 * that shortens the edges further: on 200 states the simplex was most of the layout's time (one
 * run, alternating: see layout.test.ts for what both keep), and a big flow's ranks are wrapped
 * into bands anyway.
 */
export const TIGHT_TREE_RANKING_ABOVE = 100;

/** Positions (top-left corners, as xyflow takes them) for every state. */
export function autoLayout(cards: ReadonlyArray<StateCard>, links: ReadonlyArray<TransitionLink>, initial: string | null): Positions {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'TB', nodesep: NODE_GAP, ranksep: RANK_GAP, marginx: 20, marginy: 20, ranker: cards.length > TIGHT_TREE_RANKING_ABOVE ? 'tight-tree' : 'network-simplex' });
  graph.setDefaultEdgeLabel(() => ({}));
  const boxes = new Map<string, { w: number; h: number }>();
  for (const card of cards) {
    const box = { w: NODE_WIDTH + loopRoom(card), h: estimateHeight(card) };
    boxes.set(card.name, box);
    graph.setNode(card.name, { width: box.w, height: box.h });
  }
  for (const [from, to] of forwardEdges(cards.map((c) => c.name), links, initial)) graph.setEdge(from, to);
  // dagre's own ordering of each rank was most of the layout's time; ours gives the same order.
  dagre.layout(graph, { customOrder: orderLayers });
  // dagre gives centres; the self-loop room is on the right of the node.
  const placed = cards.map((card) => {
    const node = graph.node(card.name);
    const box = boxes.get(card.name)!;
    return { name: card.name, x: node.x - box.w / 2, y: node.y - box.h / 2, w: box.w, h: box.h, rankY: node.y };
  });
  const positions: Positions = {};
  for (const box of wrapRanks(groupedInRanks(placed, cards))) positions[box.name] = { x: Math.round(box.x), y: Math.round(box.y) };
  return positions;
}

/**
 * Each rank's states reordered so the states of a group sit side by side, in the same order in
 * every rank: a group comes where its first state (top rank, leftmost) came, an ungrouped state
 * where it was. The rank is then packed again from its left edge with the usual gap. So the frames
 * drawn round groups do not interleave, whatever the flow's structure. Done after dagre's layout
 * rather than with dagre's compound graphs, which kept groups together too but took 1.3× as long
 * on a 200-state grouped flow and 1.9× on 500 (measured once each on this machine under load:
 * 4.7 → 6.3 s and 9.5 → 18.2 s); this pass is a sort per rank.
 */
export function groupedInRanks<T extends PlacedBox>(boxes: ReadonlyArray<T>, cards: ReadonlyArray<Pick<StateCard, 'name' | 'group'>>): T[] {
  const groupOf = new Map(cards.map((c) => [c.name, c.group]));
  if (![...groupOf.values()].some((g) => g !== null)) return [...boxes];
  const byRank = new Map<number, T[]>();
  for (const box of boxes) {
    const key = Math.round(box.rankY);
    byRank.set(key, [...(byRank.get(key) ?? []), box]);
  }
  const ranks = [...byRank.entries()].sort(([a], [b]) => a - b).map(([, members]) => members.sort((a, b) => a.x - b.x));
  // Where each group is met first, reading rank by rank, left to right.
  const groupAt = new Map<string, number>();
  for (const rank of ranks) {
    for (const box of rank) {
      const group = groupOf.get(box.name) ?? null;
      if (group !== null && !groupAt.has(group)) groupAt.set(group, box.x);
    }
  }
  const out: T[] = [];
  for (const rank of ranks) {
    const keyOf = (box: T) => {
      const group = groupOf.get(box.name) ?? null;
      return group === null ? box.x : groupAt.get(group)!;
    };
    const ordered = [...rank].sort((a, b) => keyOf(a) - keyOf(b) || a.x - b.x);
    let x = rank[0]!.x;
    for (const box of ordered) {
      out.push({ ...box, x });
      x += box.w + NODE_GAP;
    }
  }
  return out;
}

interface PlacedBox {
  name: string;
  x: number;
  y: number;
  w: number;
  h: number;
  /** The centre line of the box's rank: states of one rank share it. */
  rankY: number;
}

/**
 * A layout much taller than wide, folded into bands of ranks side by side, each band starting at
 * the top; one about as wide as tall is handed back as it is.
 */
export function wrapRanks<T extends PlacedBox>(boxes: ReadonlyArray<T>): T[] {
  if (boxes.length === 0) return [];
  const byRank = new Map<number, T[]>();
  for (const box of boxes) {
    const key = Math.round(box.rankY);
    byRank.set(key, [...(byRank.get(key) ?? []), box]);
  }
  const ranks = [...byRank.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, members]) => ({ members, top: Math.min(...members.map((b) => b.y)), bottom: Math.max(...members.map((b) => b.y + b.h)) }));
  const left = Math.min(...boxes.map((b) => b.x));
  const width = Math.max(...boxes.map((b) => b.x + b.w)) - left;
  const top = ranks[0]!.top;
  const height = ranks.at(-1)!.bottom - top;
  const bands = Math.min(ranks.length, Math.max(1, Math.round(Math.sqrt((WRAP_ASPECT * height) / (width + BAND_GAP)))));
  if (bands < 2) return [...boxes];
  // Ranks go into bands in order, a new band once this one is as tall as its share.
  const share = height / bands;
  const out: T[] = [];
  let band = 0;
  let bandTop = top;
  for (const rank of ranks) {
    if (rank.bottom - bandTop > share && rank.top > bandTop && band < bands - 1) {
      band++;
      bandTop = rank.top;
    }
    const dx = band * (width + BAND_GAP);
    const dy = top - bandTop;
    for (const box of rank.members) out.push({ ...box, x: box.x + dx, y: box.y + dy, rankY: box.rankY + dy });
  }
  return out;
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
  // Each state with the room its self-loops and their labels take on its right.
  const boxes: Array<{ x: number; y: number; w: number; h: number }> = [];
  const heightOf = new Map(cards.map((c) => [c.name, estimateHeight(c)]));
  for (const card of cards) {
    const known = positions[card.name] ?? (renamed[card.name] !== undefined ? positions[renamed[card.name]!] : undefined);
    if (known) {
      out[card.name] = { x: known.x, y: known.y };
      boxes.push({ x: known.x, y: known.y, w: NODE_WIDTH + loopRoom(card), h: heightOf.get(card.name)! });
    }
  }
  const overlaps = (x: number, y: number, w: number, h: number) =>
    boxes.some((b) => x < b.x + b.w + 30 && x + w + 30 > b.x && y < b.y + b.h + 30 && y + h + 30 > b.y);

  for (const card of cards) {
    if (out[card.name]) continue;
    const height = heightOf.get(card.name)!;
    const width = NODE_WIDTH + loopRoom(card);
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
    for (let tries = 0; overlaps(x, y, width, height) && tries < 500; tries++) {
      x += step.x;
      y += step.y;
    }
    out[card.name] = { x, y };
    boxes.push({ x, y, w: width, h: height });
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

/**
 * `at`, or the nearest place right of or below it where a new node overlaps no state, nor the
 * self-loops and their labels on a state's right.
 */
export function freeSpot(positions: Readonly<Positions>, cards: ReadonlyArray<StateCard>, at: XY): XY {
  const sizes = new Map(cards.map((c) => [c.name, { w: NODE_WIDTH + loopRoom(c), h: estimateHeight(c) }]));
  const height = 100;
  const overlaps = (x: number, y: number) =>
    Object.entries(positions).some(([name, p]) => {
      const size = sizes.get(name) ?? { w: NODE_WIDTH, h: 120 };
      return x < p.x + size.w + 30 && x + NODE_WIDTH + 30 > p.x && y < p.y + size.h + 30 && y + height + 30 > p.y;
    });
  // Rings of growing distance: right, below, left, above; the first free one wins.
  for (let ring = 0; ring < 40; ring++) {
    const d = ring * 60;
    for (const [dx, dy] of [[d, 0], [0, d], [-d, 0], [0, -d], [d, d], [-d, d]] as const) {
      if (!overlaps(at.x + dx, at.y + dy)) return { x: Math.round(at.x + dx), y: Math.round(at.y + dy) };
    }
  }
  return at;
}
