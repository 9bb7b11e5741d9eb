// The layout job of the flow worker routes the edges beside the layout, so that opening a big flow
// does not route them on the page; the canvas uses those routes only while they fit what it shows.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import { routeEdges } from '../../../../../server/flow/graph/edge-routes.ts';
import { placeMissing, type Positions } from '../../../../../server/flow/graph/layout.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import { analyzeFlowText } from '../../../../../server/flow/graph/analyze.ts';
import { edgePaths, layOut, openAnalysed, routeAnalysed } from '../../../../../server/flow/graph/laid-out.ts';
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

  it('keeps the positions saved with a flow laid out before, places the states added since beside them, and routes the edges there', () => {
    const saved: Positions = { ...layOut(graph.cards, graph.links, graph.initial).positions, s3: { x: 10, y: 20 } };
    // s7 was added to the text since the layout was saved.
    const before = Object.fromEntries(Object.entries(saved).filter(([name]) => name !== 's7'));
    const opened = openAnalysed(analyzeFlowText(yaml), { ...before, gone: { x: 1, y: 2 } });
    const positions = opened.laidOut!.positions;
    // Every saved state where it was saved; the state added since placed as the page places it.
    for (const [name, at] of Object.entries(before)) expect(positions[name]).toEqual(at);
    expect(positions).toEqual(placeMissing(before, graph.cards, graph.links));
    expect(positions.s7).toBeDefined();
    expect(positions.gone).toBeUndefined();
    expect(opened.laidOut!.paths).toEqual(routeEdges(graph.cards, graph.links, positions));
  });

  it('places nothing for a text without states', () => {
    expect(openAnalysed(analyzeFlowText('states: [unclosed'), {}).laidOut).toBeNull();
  });
});

describe('an edit routed in the flow worker', () => {
  const yaml = generateFlowYaml(40);
  const { positions } = layOut(graph.cards, graph.links, graph.initial);

  it("routes the edited graph's edges as the page would on the positions the page sent", () => {
    const edited = analyzeFlowText(yaml.replace('skip0: s2 }', 'skip0: s20 }'));
    const routed = routeAnalysed(edited, positions, graph);
    const onPage = deriveGraph(edited.data, edited.diagnostics, graph);
    expect(routed.graph).toEqual(onPage);
    expect(routed.paths).toEqual(routeEdges(onPage.cards, onPage.links, positions));
    // The edge moved: routed to its new target.
    expect(routed.paths!.has('s0→skip0')).toBe(true);
    expect(routeAnalysed(analyzeFlowText(yaml), positions, graph).paths).not.toEqual(routed.paths);
  });

  it('leaves the routing to the page when the positions do not place exactly the graph\'s states, or the text does not read', () => {
    const added = analyzeFlowText(`${yaml.trimEnd()}\n  extra:\n    agent: { prompt: Hello., tools: [] }\n`);
    expect(routeAnalysed(added, positions, graph).paths).toBeNull();
    const { s5: _gone, ...missing } = positions;
    expect(routeAnalysed(analyzeFlowText(yaml), missing, graph).paths).toBeNull();
    expect(routeAnalysed(analyzeFlowText('states: [unclosed'), positions, graph).paths).toBeNull();
    expect(routeAnalysed(analyzeFlowText(yaml), null, graph).paths).toBeNull();
  });
});
