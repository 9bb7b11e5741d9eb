// The order of states within each rank: ours (layer-order.ts) must be dagre's own, node for node,
// so a flow laid out with it looks exactly as it did with dagre's ordering, with the same crossings.
import dagre, { type graphlib } from '@dagrejs/dagre';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import { NODE_WIDTH, TIGHT_TREE_RANKING_ABOVE, autoLayout, estimateHeight, forwardEdges, loopRoom } from '../../../../../server/flow/graph/layout.ts';
import { crossingsOf, orderLayers } from '../../../../../server/flow/graph/layer-order.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

type Edges = Array<[string, string]>;
interface Laid {
  /** Each node's (and dummy's) rank and place in it, as the order phase left them. */
  orders: Record<string, string>;
  crossings: number;
  /** Where dagre put each node in the end. */
  xy: Record<string, string>;
}

/** dagre's layout of a graph, with its own ordering or ours; ours may not hand the work back to dagre. */
function laidOut(nodes: Array<{ name: string; width: number; height: number }>, edges: Edges, ranker: string, ours: boolean, compound?: (graph: graphlib.Graph) => void): Laid {
  const graph = new dagre.graphlib.Graph({ compound: compound !== undefined });
  graph.setGraph({ rankdir: 'TB', nodesep: 70, ranksep: 90, marginx: 20, marginy: 20, ranker });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) graph.setNode(node.name, { width: node.width, height: node.height });
  for (const [from, to] of edges) graph.setEdge(from, to);
  compound?.(graph);
  const result: Laid = { orders: {}, crossings: -1, xy: {} };
  dagre.layout(graph, {
    customOrder: (layered, dagreOrder) => {
      if (ours) orderLayers(layered, compound ? dagreOrder : () => { throw new Error('the ordering handed this graph back to dagre'); });
      else dagreOrder(layered);
      for (const v of layered.nodes()) {
        // A dummy's name comes from a counter that runs on across layouts: name it by its edge.
        const node = layered.node(v) as unknown as { rank: number; order: number; edgeObj?: { v: string; w: string } };
        result.orders[node.edgeObj ? `${node.edgeObj.v}>${node.edgeObj.w}@${node.rank}` : v] = `${node.rank}:${node.order}`;
      }
      if (!compound) result.crossings = crossingsOf(layered);
    },
  });
  for (const v of graph.nodes()) result.xy[v] = `${graph.node(v).x},${graph.node(v).y}`;
  return result;
}

function flowGraph(yaml: string): { nodes: Array<{ name: string; width: number; height: number }>; edges: Edges; ranker: string } {
  const graph = deriveGraph(parseFlow(yaml).document as unknown as FlowData, []);
  return {
    nodes: graph.cards.map((card) => ({ name: card.name, width: NODE_WIDTH + loopRoom(card), height: estimateHeight(card) })),
    edges: forwardEdges(graph.cards.map((c) => c.name), graph.links, graph.initial),
    ranker: graph.cards.length > TIGHT_TREE_RANKING_ABOVE ? 'tight-tree' : 'network-simplex',
  };
}

/** A seeded random layered DAG: wide ranks, edges spanning one to four ranks, some states with no edge up. */
function randomGraph(seed: number, count: number): { nodes: Array<{ name: string; width: number; height: number }>; edges: Edges } {
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  // Names as a designer might write them, some of them digits only (graphlib lists those first).
  const nodes = Array.from({ length: count }, (_, i) => ({ name: i % 7 === 3 ? String(1000 - i) : `n${i}`, width: 120 + Math.floor(random() * 200), height: 60 + Math.floor(random() * 80) }));
  const edges: Edges = [];
  const seen = new Set<string>();
  for (let i = 1; i < count; i++) {
    const links = 1 + Math.floor(random() * 3);
    for (let k = 0; k < links; k++) {
      const from = Math.max(0, i - 1 - Math.floor(random() * Math.min(i, 8)));
      const key = `${from}>${i}`;
      if (seen.has(key) || random() < 0.15) continue;
      seen.add(key);
      edges.push([nodes[from]!.name, nodes[i]!.name]);
    }
  }
  return { nodes, edges };
}

describe("the order within ranks, ours against dagre's", () => {
  const flows: Array<[string, string]> = [
    ['the guessing game', GUESSING_GAME_YAML],
    ['a generated 50-state flow (network simplex ranks)', generateFlowYaml(50)],
    ['a generated 200-state flow (tight-tree ranks)', generateFlowYaml(200)],
    ['a generated 120-state grouped flow', generateFlowYaml(120, { groupEvery: 20 })],
  ];
  for (const [label, yaml] of flows) {
    it(`puts every state and every bend of an edge where dagre's ordering does: ${label}`, () => {
      const { nodes, edges, ranker } = flowGraph(yaml);
      const theirs = laidOut(nodes, edges, ranker, false);
      const ours = laidOut(nodes, edges, ranker, true);
      expect(Object.keys(ours.orders).length).toBeGreaterThanOrEqual(nodes.length);
      expect(ours.orders).toEqual(theirs.orders);
      expect(ours.crossings).toBe(theirs.crossings);
      expect(ours.xy).toEqual(theirs.xy);
    });
  }

  it("gives dagre's order on random graphs with many crossings, ties and states without edges", () => {
    let crossed = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const { nodes, edges } = randomGraph(seed, 20 + (seed % 4) * 12);
      for (const ranker of ['network-simplex', 'tight-tree', 'longest-path']) {
        const theirs = laidOut(nodes, edges, ranker, false);
        const ours = laidOut(nodes, edges, ranker, true);
        expect(ours.orders, `seed ${seed}, ${ranker}`).toEqual(theirs.orders);
        expect(ours.xy, `seed ${seed}, ${ranker}`).toEqual(theirs.xy);
        if (theirs.crossings > 0) crossed++;
      }
    }
    // The graphs are tangled enough for the ordering to matter.
    expect(crossed).toBeGreaterThan(30);
  });

  it("hands a graph with subgraphs to dagre's own ordering", () => {
    const { nodes, edges } = randomGraph(7, 30);
    const grouped = (graph: graphlib.Graph) => {
      graph.setNode('cluster', {});
      for (const node of nodes.slice(5, 12)) graph.setParent(node.name, 'cluster');
    };
    expect(laidOut(nodes, edges, 'network-simplex', true, grouped).xy).toEqual(laidOut(nodes, edges, 'network-simplex', false, grouped).xy);
  });

  it('lays out a small flow where the studio laid it out before', () => {
    const game = deriveGraph(parseFlow(GUESSING_GAME_YAML).document as unknown as FlowData, []);
    expect(autoLayout(game.cards, game.links, game.initial)).toEqual({ setup: { x: 175, y: 20 }, playing: { x: 74, y: 226 }, won: { x: 330, y: 510 }, lost: { x: 20, y: 510 } });
    const chain = deriveGraph(parseFlow(generateFlowYaml(12)).document as unknown as FlowData, []);
    expect(autoLayout(chain.cards, chain.links, chain.initial)).toEqual({
      s0: { x: 186, y: 20 }, s1: { x: 339, y: 208 }, s2: { x: 64, y: 396 }, s3: { x: 319, y: 584 }, s4: { x: 54, y: 772 }, s5: { x: 299, y: 960 },
      s6: { x: 887, y: 20 }, s7: { x: 1122, y: 208 }, s8: { x: 877, y: 396 }, s9: { x: 1102, y: 584 }, s10: { x: 863, y: 772 }, s11: { x: 976, y: 986 },
    });
  });
});
