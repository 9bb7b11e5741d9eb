// The flow worker's open job in Node, step by step, on the studio bench's generated flows, and the
// layout's ordering phase with dagre's own `order` against ours (layer-order.ts): CPU time (this
// process's, so other work on a shared machine weighs on it far less than on wall time), the
// weighted crossings each leaves, and whether the two lay out every state at the same place.
//   npx tsx test/bench/studio-layout.ts [rounds] [sizes…]      e.g. 5 50 200 500
// Rounds alternate dagre, ours, dagre, …; each figure is the median of its rounds.
import { cpuUsage } from 'node:process';
import { loadavg } from 'node:os';
import dagre from '@dagrejs/dagre';
import { analyzeFlowText } from '../../server/flow/graph/analyze.ts';
import { deriveGraph } from '../../server/flow/graph/graph.ts';
import { routeEdges } from '../../server/flow/graph/edge-routes.ts';
import { NODE_WIDTH, TIGHT_TREE_RANKING_ABOVE, autoLayout, estimateHeight, forwardEdges, loopRoom } from '../../server/flow/graph/layout.ts';
import { crossingsOf, orderLayers } from '../../server/flow/graph/layer-order.ts';
import type { StateCard, TransitionLink } from '../../server/flow/graph/graph.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';

const rounds = Number(process.argv[2] ?? 5);
const sizes = process.argv.length > 3 ? process.argv.slice(3).map(Number) : [50, 200, 500];

function cpuMs<T>(run: () => T): [T, number] {
  const start = cpuUsage();
  const result = run();
  const used = cpuUsage(start);
  return [result, (used.user + used.system) / 1000];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

/** autoLayout's dagre run, with either ordering: the order phase's time, the whole layout's, the crossings, the positions. */
function dagreRun(cards: ReadonlyArray<StateCard>, links: ReadonlyArray<TransitionLink>, initial: string | null, ours: boolean) {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'TB', nodesep: 70, ranksep: 90, marginx: 20, marginy: 20, ranker: cards.length > TIGHT_TREE_RANKING_ABOVE ? 'tight-tree' : 'network-simplex' });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const card of cards) graph.setNode(card.name, { width: NODE_WIDTH + loopRoom(card), height: estimateHeight(card) });
  for (const [from, to] of forwardEdges(cards.map((c) => c.name), links, initial)) graph.setEdge(from, to);
  let orderMs = 0;
  let crossings = 0;
  const [, layoutMs] = cpuMs(() =>
    dagre.layout(graph, {
      customOrder: (layered, dagreOrder) => {
        [, orderMs] = cpuMs(() => (ours ? orderLayers(layered, dagreOrder) : dagreOrder(layered)));
        crossings = crossingsOf(layered);
      },
    }),
  );
  const positions = graph.nodes().map((v) => `${graph.node(v).x},${graph.node(v).y}`).join(' ');
  return { orderMs, layoutMs, crossings, positions };
}

console.log(`load average before: ${load()}`);
for (const states of sizes) {
  const yaml = generateFlowYaml(states);
  const steps: Record<string, number[]> = { 'parse+checks': [], graph: [], 'layout (autoLayout)': [], 'edge routing': [] };
  const runs = { dagre: { order: [] as number[], layout: [] as number[], crossings: 0, positions: '' }, ours: { order: [] as number[], layout: [] as number[], crossings: 0, positions: '' } };
  for (let round = 0; round < rounds; round++) {
    const [analysis, parseMs] = cpuMs(() => analyzeFlowText(yaml));
    const [graph, graphMs] = cpuMs(() => deriveGraph(analysis.data, analysis.diagnostics));
    const [positions, layoutMs] = cpuMs(() => autoLayout(graph.cards, graph.links, graph.initial));
    const [, routeMs] = cpuMs(() => routeEdges(graph.cards, graph.links, positions));
    steps['parse+checks']!.push(parseMs);
    steps.graph!.push(graphMs);
    steps['layout (autoLayout)']!.push(layoutMs);
    steps['edge routing']!.push(routeMs);
    for (const which of ['dagre', 'ours'] as const) {
      const run = dagreRun(graph.cards, graph.links, graph.initial, which === 'ours');
      runs[which].order.push(run.orderMs);
      runs[which].layout.push(run.layoutMs);
      runs[which].crossings = run.crossings;
      runs[which].positions = run.positions;
    }
  }
  console.log(`\n${states} states, ${rounds} rounds (CPU ms, median), load average ${load()}`);
  console.log(`  open job: ${Object.entries(steps).map(([step, ms]) => `${step} ${median(ms).toFixed(0)}`).join(', ')}`);
  for (const which of ['dagre', 'ours'] as const) {
    const run = runs[which];
    console.log(`  ${which === 'dagre' ? "dagre's order" : 'our order   '}: order ${median(run.order).toFixed(1)} ms of layout ${median(run.layout).toFixed(0)} ms; ${run.crossings} crossings`);
  }
  console.log(`  same positions for every state and bend: ${runs.dagre.positions === runs.ours.positions ? 'yes' : 'NO'}`);
}
console.log(`\nload average after: ${load()}`);
