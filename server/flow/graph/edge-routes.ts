// Where each transition is drawn so that it and its label stay clear of the states. An edge
// goes straight (a curve from the bottom of its state into the top of the next, or side to side
// on one row) when nothing is in the way; otherwise it is routed like a wire: down out of its
// state into the gap below it, along that gap to a free vertical lane between states (the gaps
// between wrapped bands are such lanes), along the lane, and into the gap above its target. A
// lane too far from both ends goes by a channel above or below everything. Every move back up
// (a loop to an earlier state) is routed this way, never through the states in between.
//
// The label goes on a stretch of the edge where it covers no state and no label placed before
// it. Positions are the designer's or the layout's, heights the estimates of layout.ts; the
// route is recomputed when they change, not on every test-talk event.
import type { StateCard, TransitionLink } from './graph.ts';
import { NODE_WIDTH, estimateHeight, labelWidth, loopRoom, type Positions, type XY } from './layout.ts';

/** Where an edge runs; drawn by TransitionEdge from its two live anchors. */
export interface EdgePath {
  /**
   * The corners between leaving the source (its bottom centre) and entering the target (its
   * top centre), in flow coordinates; none for an edge drawn straight (a curve).
   */
  corners: XY[];
  /**
   * Where the label sits: for a curve, `t` along it; for corners, `t` along the `segment`-th
   * stretch of source anchor → corners → target anchor.
   */
  label: { segment: number; t: number };
}

export type Cubic = [XY, XY, XY, XY];

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Kept between an edge and a state it passes. */
const MARGIN = 12;
/** How far below its state an edge turns, and above its target it turns in. */
const TURN = 26;
const LABEL_HEIGHT = 22;
/** Lanes in one gap are this far apart, so parallel edges can be told apart. */
const LANE_STEP = 9;
/** Where along a curve a label may go, best first. */
const CURVE_SPOTS = [0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78];

// ---------------------------------------------------------------------------------------------
// Geometry shared with TransitionEdge

/** The curve of an edge drawn straight: down (bottom → top), or east/west between facing sides. */
export function directCurve(kind: 'down' | 'east' | 'west', link: Pick<TransitionLink, 'index' | 'count'>, from: XY, to: XY): Cubic {
  if (kind === 'down') {
    if (link.count > 1) {
      // Parallel transitions between two states bow apart so their labels do not cover each other.
      const bow = (link.index - (link.count - 1) / 2) * 90;
      const pull = Math.max(50, Math.abs(to.y - from.y) / 2);
      return [from, { x: from.x + bow, y: from.y + pull }, { x: to.x + bow, y: to.y - pull }, to];
    }
    const distance = to.y - from.y;
    const pull = distance >= 0 ? distance / 2 : 0.25 * 25 * Math.sqrt(-distance);
    return [from, { x: from.x, y: from.y + pull }, { x: to.x, y: to.y - pull }, to];
  }
  const pull = Math.max(30, Math.abs(to.x - from.x) / 2);
  const out = kind === 'east' ? 1 : -1;
  return [from, { x: from.x + out * pull, y: from.y }, { x: to.x - out * pull, y: to.y }, to];
}

export function pointOnCubic([a, b, c, d]: Cubic, t: number): XY {
  const u = 1 - t;
  return {
    x: u * u * u * a.x + 3 * u * u * t * b.x + 3 * u * t * t * c.x + t * t * t * d.x,
    y: u * u * u * a.y + 3 * u * u * t * b.y + 3 * u * t * t * c.y + t * t * t * d.y,
  };
}

export function cubicPath([a, b, c, d]: Cubic): string {
  return `M ${a.x} ${a.y} C ${b.x} ${b.y}, ${c.x} ${c.y}, ${d.x} ${d.y}`;
}

/** A path through `points` with straight stretches and rounded corners. */
export function polylinePath(points: ReadonlyArray<XY>, radius = 10): string {
  let path = `M ${points[0]!.x} ${points[0]!.y}`;
  for (let i = 1; i < points.length - 1; i++) {
    const [prev, at, next] = [points[i - 1]!, points[i]!, points[i + 1]!];
    const r = Math.min(radius, distance(prev, at) / 2, distance(at, next) / 2);
    const before = towards(at, prev, r);
    const after = towards(at, next, r);
    path += ` L ${before.x} ${before.y} Q ${at.x} ${at.y} ${after.x} ${after.y}`;
  }
  const last = points.at(-1)!;
  return `${path} L ${last.x} ${last.y}`;
}

export function pointOnPolyline(points: ReadonlyArray<XY>, segment: number, t: number): XY {
  const a = points[Math.min(segment, points.length - 2)]!;
  const b = points[Math.min(segment + 1, points.length - 1)]!;
  return { x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t };
}

const distance = (a: XY, b: XY) => Math.hypot(b.x - a.x, b.y - a.y);
const towards = (from: XY, to: XY, length: number): XY => {
  const d = distance(from, to) || 1;
  return { x: from.x + ((to.x - from.x) / d) * length, y: from.y + ((to.y - from.y) / d) * length };
};

// ---------------------------------------------------------------------------------------------
// Routing

/** Whether the segment a–b passes through `box` (Liang–Barsky clipping). */
function segmentHits(a: XY, b: XY, box: Box): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const edges: Array<[number, number]> = [
    [-dx, a.x - box.x],
    [dx, box.x + box.w - a.x],
    [-dy, a.y - box.y],
    [dy, box.y + box.h - a.y],
  ];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const r = q / p;
    if (p < 0) {
      if (r > t1) return false;
      if (r > t0) t0 = r;
    } else {
      if (r < t0) return false;
      if (r < t1) t1 = r;
    }
  }
  return t0 <= t1;
}

const overlap = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const grow = (box: Box, by: number): Box => ({ x: box.x - by, y: box.y - by, w: box.w + 2 * by, h: box.h + 2 * by });

/**
 * Boxes bucketed by area, so "what is near this segment" looks at a few states, not all of them:
 * a 200-state flow has ~400 edges to check, each against every state otherwise.
 */
class BoxGrid<T extends Box> {
  private readonly cells = new Map<number, T[]>();
  private static readonly CELL = 360;

  add(box: T): void {
    this.visit(box, (key) => {
      const cell = this.cells.get(key);
      if (cell) cell.push(box);
      else this.cells.set(key, [box]);
    });
  }

  /** The boxes in the cells `area` touches (a box may come more than once). */
  near(area: Box): T[] {
    const out: T[] = [];
    this.visit(area, (key) => {
      const cell = this.cells.get(key);
      if (cell) for (const box of cell) out.push(box);
    });
    return out;
  }

  private visit(box: Box, each: (key: number) => void): void {
    const size = BoxGrid.CELL;
    const x2 = Math.floor((box.x + box.w) / size);
    const y2 = Math.floor((box.y + box.h) / size);
    // Cells numbered row by row; flows stay far inside ±2^20 cells.
    for (let cx = Math.floor(box.x / size); cx <= x2; cx++) for (let cy = Math.floor(box.y / size); cy <= y2; cy++) each(cx * 2_097_152 + cy);
  }
}

const around = (a: XY, b: XY, by: number): Box => ({ x: Math.min(a.x, b.x) - by, y: Math.min(a.y, b.y) - by, w: Math.abs(b.x - a.x) + 2 * by, h: Math.abs(b.y - a.y) + 2 * by });

/** Which way an edge goes, from where its two states are drawn (top-left corners). */
export type EdgeDirection = 'down' | 'east' | 'west' | 'up';

/** States whose tops are closer than this are on one row. */
const ROW = 60;

export function directionOf(from: XY, to: XY): EdgeDirection {
  // Below, or on the same row but overlapping in x (a bottom-to-top curve still reads there).
  if (to.y > from.y + ROW || (to.y >= from.y - ROW && Math.abs(to.x - from.x) < NODE_WIDTH)) return 'down';
  if (to.y >= from.y - ROW) return to.x > from.x ? 'east' : 'west';
  return 'up';
}

/** The two ends of an edge drawn straight, from the states' boxes. */
export function directEnds(direction: 'down' | 'east' | 'west', source: Box, target: Box): [XY, XY] {
  if (direction === 'down') return [{ x: source.x + NODE_WIDTH / 2, y: source.y + source.h }, { x: target.x + NODE_WIDTH / 2, y: target.y }];
  const right = direction === 'east';
  return [
    { x: source.x + (right ? NODE_WIDTH : 0), y: source.y + source.h / 2 },
    { x: target.x + (right ? 0 : NODE_WIDTH), y: target.y + target.h / 2 },
  ];
}

/**
 * A route for every transition that is not a self-loop (those are drawn on their state's right,
 * in the room layout.ts leaves there).
 */
export function routeEdges(cards: ReadonlyArray<StateCard>, links: ReadonlyArray<TransitionLink>, positions: Readonly<Positions>): Map<string, EdgePath> {
  const nodes = new Map<string, Box>();
  // What an edge must not cross: each state with its loops' room on its right.
  const obstacles: Array<Box & { name: string }> = [];
  for (const card of cards) {
    const at = positions[card.name];
    if (!at) continue;
    const h = estimateHeight(card);
    nodes.set(card.name, { x: at.x, y: at.y, w: NODE_WIDTH, h });
    obstacles.push({ name: card.name, x: at.x, y: at.y, w: NODE_WIDTH + loopRoom(card), h });
  }
  obstacles.sort((a, b) => a.x - b.x);
  const grid = new BoxGrid<Box & { name: string }>();
  for (const o of obstacles) grid.add(o);
  const labels = new BoxGrid<Box>();
  const laneUse = new Map<number, number>();
  const routes = new Map<string, EdgePath>();
  if (obstacles.length === 0) return routes;
  const top = Math.min(...obstacles.map((o) => o.y));
  const bottom = Math.max(...obstacles.map((o) => o.y + o.h));

  const blocked = (a: XY, b: XY, except: ReadonlyArray<string>) =>
    grid.near(around(a, b, MARGIN)).some((o) => !except.includes(o.name) && segmentHits(a, b, grow(o, MARGIN)));
  const labelFits = (centre: XY, width: number) => {
    const box = { x: centre.x - width / 2, y: centre.y - LABEL_HEIGHT / 2, w: width, h: LABEL_HEIGHT };
    return !grid.near(grow(box, 4)).some((o) => overlap(grow(o, 4), box)) && !labels.near(box).some((l) => overlap(l, box));
  };
  const placeLabel = (centre: XY, width: number) => labels.add({ x: centre.x - width / 2 - 3, y: centre.y - LABEL_HEIGHT / 2 - 2, w: width + 6, h: LABEL_HEIGHT + 4 });

  /** Free vertical lanes (x) across the band of heights from `y1` to `y2`, outermost ones included. */
  function lanes(y1: number, y2: number): Array<{ x: number; low: number; high: number }> {
    const lo = Math.min(y1, y2);
    const hi = Math.max(y1, y2);
    const merged: Array<[number, number]> = [];
    for (const o of obstacles) {
      if (o.y - MARGIN >= hi || o.y + o.h + MARGIN <= lo) continue;
      const from = o.x - MARGIN;
      const to = o.x + o.w + MARGIN;
      const last = merged.at(-1);
      if (last && from <= last[1]) last[1] = Math.max(last[1], to);
      else merged.push([from, to]);
    }
    if (merged.length === 0) return [{ x: NaN, low: -Infinity, high: Infinity }];
    const out = [{ x: merged[0]![0] - 16, low: -Infinity, high: merged[0]![0] }];
    for (let i = 1; i < merged.length; i++) {
      const low = merged[i - 1]![1];
      const high = merged[i]![0];
      out.push({ x: (low + high) / 2, low, high });
    }
    out.push({ x: merged.at(-1)![1] + 16, low: merged.at(-1)![1], high: Infinity });
    return out;
  }

  /** The lane's x for one more edge: parallel edges spread out within the gap. */
  function claim(lane: { x: number; low: number; high: number }, fallback: number): number {
    const centre = Number.isNaN(lane.x) ? fallback : lane.x;
    const key = Math.round(centre);
    const used = laneUse.get(key) ?? 0;
    laneUse.set(key, used + 1);
    const offset = (used % 2 === 0 ? 1 : -1) * Math.ceil(used / 2) * LANE_STEP;
    if (lane.low === -Infinity) return centre - used * LANE_STEP;
    if (lane.high === Infinity) return centre + used * LANE_STEP;
    return Math.min(lane.high - 4, Math.max(lane.low + 4, centre + offset));
  }

  /** Corners from below the source to above the target, by one lane or by a channel. */
  function corners(link: TransitionLink, source: Box, target: Box): XY[] {
    const sx = source.x + NODE_WIDTH / 2;
    const tx = target.x + NODE_WIDTH / 2;
    const yOut = source.y + source.h + TURN;
    const yIn = target.y - TURN;
    const ends = [link.source, link.target];
    let best: { cost: number; lane: { x: number; low: number; high: number } } | null = null;
    for (const lane of lanes(yOut, yIn)) {
      const x = Number.isNaN(lane.x) ? (sx + tx) / 2 : lane.x;
      if (blocked({ x: sx, y: yOut }, { x, y: yOut }, ends) || blocked({ x, y: yIn }, { x: tx, y: yIn }, ends)) continue;
      const cost = Math.abs(sx - x) + Math.abs(x - tx);
      if (!best || cost < best.cost) best = { cost, lane };
    }
    if (best) {
      const x = claim(best.lane, (sx + tx) / 2);
      return [{ x: sx, y: yOut }, { x, y: yOut }, { x, y: yIn }, { x: tx, y: yIn }];
    }
    // No one lane joins the two gaps: over the top of everything, or under the bottom.
    let channel: { cost: number; points: XY[] } | null = null;
    for (const y of [top - TURN - 8, bottom + TURN + 8]) {
      const a = nearestLane(lanes(yOut, y), sx, (x) => !blocked({ x: sx, y: yOut }, { x, y: yOut }, ends));
      const b = nearestLane(lanes(y, yIn), tx, (x) => !blocked({ x, y: yIn }, { x: tx, y: yIn }, ends));
      if (!a || !b) continue;
      const cost = Math.abs(sx - a.x) + Math.abs(yOut - y) + Math.abs(a.x - b.x) + Math.abs(y - yIn) + Math.abs(b.x - tx);
      if (!channel || cost < channel.cost) {
        channel = { cost, points: [{ x: sx, y: yOut }, { x: a.x, y: yOut }, { x: a.x, y }, { x: b.x, y }, { x: b.x, y: yIn }, { x: tx, y: yIn }] };
      }
    }
    if (channel) {
      const [, a, , b] = channel.points;
      const ax = claimAt(a!.x);
      const bx = claimAt(b!.x);
      channel.points[1]!.x = channel.points[2]!.x = ax;
      channel.points[3]!.x = channel.points[4]!.x = bx;
      return channel.points;
    }
    // Round the left of everything (the horizontal stretches may then cross a state).
    const x = claimAt(obstacles[0]!.x - MARGIN - 16);
    return [{ x: sx, y: yOut }, { x, y: yOut }, { x, y: yIn }, { x: tx, y: yIn }];
  }

  function nearestLane(candidates: Array<{ x: number; low: number; high: number }>, from: number, clear: (x: number) => boolean) {
    let best: { x: number; d: number } | null = null;
    for (const lane of candidates) {
      const x = Number.isNaN(lane.x) ? from : lane.x;
      if (!clear(x)) continue;
      const d = Math.abs(x - from);
      if (!best || d < best.d) best = { x, d };
    }
    return best;
  }

  function claimAt(x: number): number {
    const key = Math.round(x);
    const used = laneUse.get(key) ?? 0;
    laneUse.set(key, used + 1);
    return x + (used % 2 === 0 ? 1 : -1) * Math.ceil(used / 2) * LANE_STEP;
  }

  for (const link of links) {
    if (link.selfLoop) continue;
    const source = nodes.get(link.source);
    const target = nodes.get(link.target);
    if (!source || !target) continue;
    const width = labelWidth(link.tool, false);
    const direction = directionOf(source, target);
    if (direction !== 'up') {
      const [from, to] = directEnds(direction, source, target);
      const curve = directCurve(direction, link, from, to);
      const samples = Array.from({ length: 13 }, (_, i) => pointOnCubic(curve, i / 12));
      // The states near the curve once (its control points bound it), then each stretch of it.
      const xs = curve.map((p) => p.x);
      const ys = curve.map((p) => p.y);
      const area = { x: Math.min(...xs) - MARGIN, y: Math.min(...ys) - MARGIN, w: Math.max(...xs) - Math.min(...xs) + 2 * MARGIN, h: Math.max(...ys) - Math.min(...ys) + 2 * MARGIN };
      const near = grid.near(area).filter((o) => o.name !== link.source && o.name !== link.target).map((o) => grow(o, MARGIN));
      const clear = samples.every((p, i) => i === 0 || !near.some((o) => segmentHits(samples[i - 1]!, p, o)));
      const spot = clear ? CURVE_SPOTS.find((t) => labelFits(pointOnCubic(curve, t), width)) : undefined;
      if (spot !== undefined) {
        placeLabel(pointOnCubic(curve, spot), width);
        routes.set(link.id, { corners: [], label: { segment: 0, t: spot } });
        continue;
      }
    }
    const points = corners(link, source, target);
    const path = [{ x: source.x + NODE_WIDTH / 2, y: source.y + source.h }, ...points, { x: target.x + NODE_WIDTH / 2, y: target.y }];
    // The label on the longest stretch where it fits, else on the longest stretch.
    const stretches = path.slice(1).map((p, i) => ({ segment: i, length: distance(path[i]!, p) })).sort((a, b) => b.length - a.length);
    let label: EdgePath['label'] | null = null;
    for (const { segment } of stretches) {
      const t = [0.5, 0.3, 0.7].find((f) => labelFits(pointOnPolyline(path, segment, f), width));
      if (t !== undefined) {
        label = { segment, t };
        break;
      }
    }
    label ??= { segment: stretches[0]!.segment, t: 0.5 };
    placeLabel(pointOnPolyline(path, label.segment, label.t), width);
    routes.set(link.id, { corners: points, label });
  }
  return routes;
}
