// The order of the states within each rank (dagre's crossing reduction, its `order` phase), done
// here rather than by dagre, and handed to dagre through its `customOrder` option.
//
// Why the code is ours: dagre's `order` runs the layer-by-layer barycentre sweeps on graphlib
// objects with string keys, building a graph per rank and sorting entry objects per sweep; on the
// generated flows of the studio bench it was most of the layout. Measured in Node (CPU time,
// median of 5, test/bench/studio-layout.ts, docs/benchmarks.md): 200 states 15.8 ms against
// dagre's 239.5 ms (its whole layout 391 → 127 ms), 500 states 48.0 ms against 530.8 ms
// (919 → 409 ms), 99 and 249 crossings both ways, every position the same. This
// is the same algorithm on integer ids and typed arrays: the same initial order (a depth-first
// walk from the top rank), the same sweeps (up, down, up, … until four in a row found no fewer
// crossings), the same barycentres, the same tie-breaking (the node's place in graphlib's node
// list, the bias flipped as dagre flips it), the same weighted crossing count, the same choice of
// the best order. So it gives dagre's order exactly (layer-order.test.ts compares the two, node for
// node, on generated and random graphs), with the same crossings, in a fraction of the time.
//
// dagre's ordering has further cases the studio never makes: compound graphs (subgraphs with
// border nodes), ordering constraints, an earlier layout's order to keep, two dummies of one edge
// in a rank (a reversed edge beside its twin). For a graph with any of these, or anything else
// this code does not expect, it leaves the work to dagre's own `order`.
import type { Edge, graphlib } from '@dagrejs/dagre';

type Graph = graphlib.Graph;
/** dagre's own `order`, handed to `customOrder` (its options default to none). */
type DagreOrder = (graph: Graph) => void;

interface NodeLabel {
  rank?: number;
  order?: number;
  minRank?: number;
  dummy?: string;
  edgeObj?: { v: string; w: string };
}

/** dagre's `customOrder`: our ordering, or dagre's own for a graph it does not cover. */
export function orderLayers(graph: Graph, dagreOrder: DagreOrder): void {
  const layered = readLayered(graph);
  if (layered === null) {
    dagreOrder(graph);
    return;
  }
  const best = bestOrder(layered);
  for (let v = 0; v < layered.names.length; v++) (graph.node(layered.names[v]!) as NodeLabel).order = best[v]!;
}

/** The layered graph dagre hands to `order`, as integer ids: node v is `names[v]`, graphlib's node list order. */
interface Layered {
  names: string[];
  rank: Int32Array;
  maxRank: number;
  /** Each rank's nodes in graphlib's node order (dagre's movable list: a node's index here breaks ties). */
  ranks: Int32Array[];
  /** Index of each node within `ranks[rank]`. */
  indexInRank: Int32Array;
  /** graphlib's successors of each node, in its order (the initial order's depth-first walk). */
  successors: Int32Array[];
  /** Neighbours in the rank above with the summed weight of the edges to each (a down sweep's barycentres). */
  up: Adjacency;
  /** Neighbours in the rank below, likewise (an up sweep's). */
  down: Adjacency;
  /** Every edge from each node, with its own weight, for the crossing count. */
  out: Adjacency;
}

/** Compressed lists: node v's are `to[start[v]..start[v+1])` with `weight` beside them. */
interface Adjacency {
  start: Int32Array;
  to: Int32Array;
  weight: Float64Array;
}

function readLayered(graph: Graph): Layered | null {
  if ((graph as unknown as { isCompound(): boolean }).isCompound() && graph.nodes().some((v) => (graph.children(v) as string[] | undefined)?.length)) return null;
  const names = graph.nodes();
  const n = names.length;
  if (n === 0) return null;
  const id = new Map<string, number>();
  names.forEach((name, i) => id.set(name, i));
  const rank = new Int32Array(n);
  let maxRank = 0;
  const edgeDummies = new Set<string>();
  for (let v = 0; v < n; v++) {
    const label = graph.node(names[v]!) as NodeLabel;
    if (typeof label.rank !== 'number' || !Number.isInteger(label.rank) || label.rank < 0 || label.minRank !== undefined) return null;
    rank[v] = label.rank;
    if (label.rank > maxRank) maxRank = label.rank;
    if (label.dummy === 'edge' && label.edgeObj) {
      // Two dummies of edges between the same two nodes in one rank: dagre's reversed-pair case.
      const key = `${label.edgeObj.v}\u0000${label.edgeObj.w}\u0000${label.rank}`;
      if (edgeDummies.has(key)) return null;
      edgeDummies.add(key);
    }
  }
  const counts = new Int32Array(maxRank + 1);
  for (let v = 0; v < n; v++) counts[rank[v]!]!++;
  const ranks = Array.from(counts, (count) => new Int32Array(count));
  const indexInRank = new Int32Array(n);
  const filled = new Int32Array(maxRank + 1);
  for (let v = 0; v < n; v++) {
    const r = rank[v]!;
    indexInRank[v] = filled[r]!;
    ranks[r]![filled[r]!++] = v;
  }

  const successors: Int32Array[] = [];
  const upLists: Array<Array<[number, number]>> = [];
  const downLists: Array<Array<[number, number]>> = [];
  const outLists: Array<Array<[number, number]>> = [];
  for (let v = 0; v < n; v++) {
    const name = names[v]!;
    successors.push(Int32Array.from((graph.successors(name) as string[] | undefined) ?? [], (w) => id.get(w)!));
    // As dagre's layer graphs have them: one edge per neighbour, weights summed, in the order
    // graphlib lists the edges (a neighbour's place is where its first edge came).
    const up = aggregated(graph, (graph.inEdges(name) as Edge[] | undefined) ?? [], (e) => e.v, id);
    const down = aggregated(graph, (graph.outEdges(name) as Edge[] | undefined) ?? [], (e) => e.w, id);
    if (up === null || down === null) return null;
    for (const [u] of up) if (rank[u] !== rank[v]! - 1) return null; // dagre's ordering assumes short edges only
    for (const [w] of down) if (rank[w] !== rank[v]! + 1) return null;
    upLists.push(up);
    downLists.push(down);
    const out: Array<[number, number]> = [];
    for (const e of (graph.outEdges(name) as Edge[] | undefined) ?? []) out.push([id.get(e.w)!, (graph.edge(e) as { weight: number }).weight]);
    outLists.push(out);
  }
  return { names, rank, maxRank, ranks, indexInRank, successors, up: compressed(upLists), down: compressed(downLists), out: compressed(outLists) };
}

function aggregated(graph: Graph, edges: Edge[], other: (e: Edge) => string, id: Map<string, number>): Array<[number, number]> | null {
  const list: Array<[number, number]> = [];
  for (const e of edges) {
    const weight = (graph.edge(e) as { weight?: unknown } | undefined)?.weight;
    // A weight of 0 would make a barycentre 0/0, which dagre sorts in its own way.
    if (typeof weight !== 'number' || !(weight > 0) || !Number.isFinite(weight)) return null;
    const u = id.get(other(e))!;
    const seen = list.find((entry) => entry[0] === u);
    if (seen) seen[1] += weight;
    else list.push([u, weight]);
  }
  return list;
}

function compressed(lists: Array<Array<[number, number]>>): Adjacency {
  const start = new Int32Array(lists.length + 1);
  for (let v = 0; v < lists.length; v++) start[v + 1] = start[v]! + lists[v]!.length;
  const to = new Int32Array(start[lists.length]!);
  const weight = new Float64Array(start[lists.length]!);
  lists.forEach((list, v) => list.forEach(([u, w], k) => {
    to[start[v]! + k] = u;
    weight[start[v]! + k] = w;
  }));
  return { start, to, weight };
}

/** dagre's `order` on the integer graph: each node's place in its rank. */
function bestOrder(g: Layered): Int32Array {
  const order = initialOrder(g);
  const sweeper = new Sweeper(g);
  let bestCrossings = Number.POSITIVE_INFINITY;
  let best = order.slice();
  for (let i = 0, lastBest = 0; lastBest < 4; ++i, ++lastBest) {
    // dagre alternates, starting with a sweep upwards; from the third sweep on, every other pair
    // of sweeps flips the bias that breaks ties between equal barycentres.
    sweeper.sweep(order, i % 2 === 1, i % 4 >= 2);
    const crossings = crossingCount(g, order);
    if (crossings < bestCrossings) {
      lastBest = 0;
      best = order.slice();
      bestCrossings = crossings;
    } else if (crossings === bestCrossings) {
      best = order.slice();
    }
  }
  return best;
}

/** dagre's initial order: a depth-first walk from the nodes by rank, each placed in its rank when first met. */
function initialOrder(g: Layered): Int32Array {
  const n = g.names.length;
  const order = new Int32Array(n);
  const placed = new Int32Array(g.maxRank + 1);
  const visited = new Uint8Array(n);
  // The nodes sorted by rank, keeping graphlib's order within a rank (a stable sort).
  const byRank: number[] = [];
  for (const members of g.ranks) for (const v of members) byRank.push(v);
  const stack = new Int32Array(n);
  const next = new Int32Array(n);
  const visit = (v: number) => {
    visited[v] = 1;
    order[v] = placed[g.rank[v]!]!++;
  };
  for (const root of byRank) {
    if (visited[root]) continue;
    visit(root);
    let depth = 0;
    stack[0] = root;
    next[0] = 0;
    while (depth >= 0) {
      const v = stack[depth]!;
      const successors = g.successors[v]!;
      if (next[depth]! < successors.length) {
        const w = successors[next[depth]!++]!;
        if (!visited[w]) {
          visit(w);
          stack[++depth] = w;
          next[depth] = 0;
        }
      } else {
        depth--;
      }
    }
  }
  return order;
}

/** One rank's re-sort by barycentre, with scratch space kept across ranks and sweeps. */
class Sweeper {
  private readonly barycenter: Float64Array;
  private readonly sortable: Int32Array;
  private readonly unsortable: Int32Array;
  private readonly placed: Int32Array;

  constructor(private readonly g: Layered) {
    const widest = Math.max(...g.ranks.map((r) => r.length));
    this.barycenter = new Float64Array(widest);
    this.sortable = new Int32Array(widest);
    this.unsortable = new Int32Array(widest);
    this.placed = new Int32Array(widest);
  }

  /** A down sweep re-sorts ranks 1… by the rank above; an up sweep ranks …0 by the rank below. */
  sweep(order: Int32Array, downwards: boolean, switchBias: boolean): void {
    let biasRight = true;
    const last = this.g.maxRank;
    if (downwards) {
      for (let r = 1; r <= last; r++) if (this.sortRank(order, r, this.g.up, biasRight) && switchBias) biasRight = !biasRight;
    } else {
      for (let r = last - 1; r >= 0; r--) if (this.sortRank(order, r, this.g.down, biasRight) && switchBias) biasRight = !biasRight;
    }
  }

  /**
   * dagre's sortSubgraph for a rank without subgraphs: nodes with neighbours sorted by barycentre
   * (ties by their index in the rank's node list, reversed when biased right); nodes without
   * neighbours kept at their index. Returns whether two nodes had the same non-zero barycentre,
   * which is when dagre counts its bias as used.
   */
  private sortRank(order: Int32Array, r: number, adjacency: Adjacency, biasRight: boolean): boolean {
    const members = this.g.ranks[r]!;
    const { start, to, weight } = adjacency;
    const barycenter = this.barycenter;
    const sortable = this.sortable;
    const unsortable = this.unsortable;
    let sortableCount = 0;
    let unsortableCount = 0;
    for (let i = 0; i < members.length; i++) {
      const v = members[i]!;
      const from = start[v]!;
      const until = start[v + 1]!;
      if (from === until) {
        unsortable[unsortableCount++] = i;
        continue;
      }
      let sum = 0;
      let total = 0;
      for (let k = from; k < until; k++) {
        sum += weight[k]! * order[to[k]!]!;
        total += weight[k]!;
      }
      barycenter[i] = sum / total;
      sortable[sortableCount++] = i;
    }
    const entries = sortable.subarray(0, sortableCount);
    if (biasRight) entries.sort((a, b) => barycenter[a]! - barycenter[b]! || b - a);
    else entries.sort((a, b) => barycenter[a]! - barycenter[b]! || a - b);
    let usedBias = false;
    for (let k = 1; k < sortableCount && !usedBias; k++) {
      const value = barycenter[entries[k]!]!;
      if (value !== 0 && value === barycenter[entries[k - 1]!]!) usedBias = true;
    }
    // Merge: an unsortable node goes in once as many nodes as its index are placed before it.
    const placed = this.placed;
    let count = 0;
    let u = 0;
    while (u < unsortableCount && unsortable[u]! <= count) placed[count++] = unsortable[u++]!;
    for (let k = 0; k < sortableCount; k++) {
      placed[count++] = entries[k]!;
      while (u < unsortableCount && unsortable[u]! <= count) placed[count++] = unsortable[u++]!;
    }
    while (u < unsortableCount) placed[count++] = unsortable[u++]!;
    for (let position = 0; position < count; position++) order[members[placed[position]!]!] = position;
    return usedBias;
  }
}

/** The weighted count of edge crossings between each pair of adjacent ranks (Barth et al., as dagre counts). */
export function crossingCount(g: Pick<Layered, 'ranks' | 'out' | 'names'>, order: Int32Array): number {
  let crossings = 0;
  const { start, to, weight } = g.out;
  for (let r = 1; r < g.ranks.length; r++) {
    const north = g.ranks[r - 1]!;
    const south = g.ranks[r]!;
    // The north rank's nodes in their order, each one's edges by the place of their end below.
    const byOrder = new Int32Array(north.length);
    for (const v of north) byOrder[order[v]!] = v;
    const positions: number[] = [];
    const weights: number[] = [];
    const edgeIds: number[] = [];
    for (const v of byOrder) {
      edgeIds.length = 0;
      for (let k = start[v]!; k < start[v + 1]!; k++) edgeIds.push(k);
      edgeIds.sort((a, b) => order[to[a]!]! - order[to[b]!]!);
      for (const k of edgeIds) {
        positions.push(order[to[k]!]!);
        weights.push(weight[k]!);
      }
    }
    let firstIndex = 1;
    while (firstIndex < south.length) firstIndex <<= 1;
    const tree = new Float64Array(2 * firstIndex - 1);
    firstIndex -= 1;
    for (let e = 0; e < positions.length; e++) {
      let index = positions[e]! + firstIndex;
      const w = weights[e]!;
      tree[index] = tree[index]! + w;
      let weightSum = 0;
      while (index > 0) {
        if (index % 2) weightSum += tree[index + 1]!;
        index = (index - 1) >> 1;
        tree[index] = tree[index]! + w;
      }
      crossings += w * weightSum;
    }
  }
  return crossings;
}

/** The weighted crossings of the order dagre's layered graph holds now (for benches and tests). */
export function crossingsOf(graph: Graph): number {
  const layered = readLayered(graph);
  if (layered === null) throw new Error('crossingsOf: a graph this ordering does not cover');
  const order = Int32Array.from(layered.names, (name) => (graph.node(name) as NodeLabel).order ?? 0);
  return crossingCount(layered, order);
}
