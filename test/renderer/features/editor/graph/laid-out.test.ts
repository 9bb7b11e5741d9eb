// The layout job of the flow worker routes the edges beside the layout, so that opening a big flow
// does not route them on the page; the canvas uses those routes only while they fit what it shows.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import { routeEdges } from '../../../../../renderer/src/features/editor/graph/edge-routes.ts';
import type { FlowData } from '../../../../../renderer/src/features/editor/document/flow-data.ts';
import { deriveGraph } from '../../../../../renderer/src/features/editor/graph/graph.ts';
import { analyzeFlowText } from '../../../../../renderer/src/features/editor/document/analyze.ts';
import { edgePaths, layOut, openAnalysed } from '../../../../../renderer/src/features/editor/graph/laid-out.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';

const graph = deriveGraph(parseFlow(generateFlowYaml(40)).document as unknown as FlowData, []);

describe('edge routes made with the layout', () => {
  it('route every edge as the page would on the same positions', () => {
    const laidOut = layOut(graph.cards, graph.links, graph.initial);
    // Every edge between two states; a state's loops are drawn beside it, not routed.
    expect([...laidOut.paths.keys()].sort()).toEqual(graph.links.filter((l) => !l.selfLoop).map((l) => l.id).sort());
    expect(laidOut.paths).toEqual(routeEdges(graph.cards, graph.links, laidOut.positions));
  });

  it('are used for the graph and positions they were made for, and routed again once a state moves', () => {
    const laidOut = layOut(graph.cards, graph.links, graph.initial);
    const made = { cards: graph.cards, links: graph.links, positions: laidOut.positions, paths: laidOut.paths };
    expect(edgePaths(graph.cards, graph.links, laidOut.positions, made)).toBe(laidOut.paths);

    const moved = { ...laidOut.positions, s0: { x: laidOut.positions.s0!.x + 900, y: laidOut.positions.s0!.y } };
    const rerouted = edgePaths(graph.cards, graph.links, moved, made);
    expect(rerouted).not.toBe(laidOut.paths);
    expect(rerouted).toEqual(routeEdges(graph.cards, graph.links, moved));
    expect(edgePaths(graph.cards, graph.links, laidOut.positions, null)).toEqual(laidOut.paths);
  });
});

describe('opening a flow in one job', () => {
  const yaml = generateFlowYaml(40);

  it('lays out a flow none of whose states has a saved position, with the graph the page would derive', () => {
    const opened = openAnalysed(analyzeFlowText(yaml), { gone: { x: 1, y: 2 } });
    expect(opened.graph).toEqual(graph);
    expect(opened.laidOut?.positions).toEqual(layOut(graph.cards, graph.links, graph.initial).positions);
  });

  it('leaves a flow laid out before to the positions saved with it', () => {
    expect(openAnalysed(analyzeFlowText(yaml), { s3: { x: 10, y: 20 } }).laidOut).toBeNull();
  });
});
