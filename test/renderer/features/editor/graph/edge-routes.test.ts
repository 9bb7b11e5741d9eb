// Where transitions run: straight when nothing is in the way, otherwise round the states along
// free lanes, with every label on a stretch where it covers no state.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import { directCurve, directEnds, directionOf, pointOnCubic, pointOnPolyline, routeEdges } from '../../../../../server/flow/graph/edge-routes.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { deriveGraph, type FlowGraph } from '../../../../../server/flow/graph/graph.ts';
import { NODE_WIDTH, autoLayout, estimateHeight, labelWidth, type Positions, type XY } from '../../../../../server/flow/graph/layout.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

const graphOf = (yaml: string) => deriveGraph(parseFlow(yaml).document as unknown as FlowData, []);

/** Every edge's drawn points (sampled) and label centre, as TransitionEdge draws them. */
function drawnEdges(graph: FlowGraph, positions: Positions) {
  const paths = routeEdges(graph.cards, graph.links, positions);
  const heights = new Map(graph.cards.map((c) => [c.name, estimateHeight(c)]));
  const box = (name: string) => ({ x: positions[name]!.x, y: positions[name]!.y, w: NODE_WIDTH, h: heights.get(name)! });
  return graph.links
    .filter((l) => !l.selfLoop)
    .map((link) => {
      const path = paths.get(link.id)!;
      const source = box(link.source);
      const target = box(link.target);
      const from = { x: source.x + NODE_WIDTH / 2, y: source.y + source.h };
      const to = { x: target.x + NODE_WIDTH / 2, y: target.y };
      if (path.corners.length > 0) {
        const points = [from, ...path.corners, to];
        const samples: XY[] = [];
        for (let i = 0; i < points.length - 1; i++) for (let t = 0; t <= 1; t += 0.05) samples.push(pointOnPolyline(points, i, t));
        return { link, samples, label: pointOnPolyline(points, path.label.segment, path.label.t), routed: true };
      }
      const direction = directionOf(source, target) as 'down' | 'east' | 'west';
      const [a, b] = directEnds(direction, source, target);
      const curve = directCurve(direction, link, a, b);
      return { link, samples: Array.from({ length: 41 }, (_, i) => pointOnCubic(curve, i / 40)), label: pointOnCubic(curve, path.label.t), routed: false };
    });
}

function problems(graph: FlowGraph, positions: Positions): string[] {
  const heights = new Map(graph.cards.map((c) => [c.name, estimateHeight(c)]));
  const inside = (p: XY, name: string, by: number) => {
    const at = positions[name]!;
    return p.x > at.x + by && p.x < at.x + NODE_WIDTH - by && p.y > at.y + by && p.y < at.y + heights.get(name)! - by;
  };
  const out: string[] = [];
  for (const edge of drawnEdges(graph, positions)) {
    for (const card of graph.cards) {
      if (card.name !== edge.link.source && card.name !== edge.link.target && edge.samples.some((p) => inside(p, card.name, 2))) out.push(`${edge.link.id} crosses ${card.name}`);
      const half = labelWidth(edge.link.tool, false) / 2;
      const corners = [-half, half].flatMap((dx) => [-11, 11].map((dy) => ({ x: edge.label.x + dx, y: edge.label.y + dy })));
      if ([edge.label, ...corners].some((p) => inside(p, card.name, 0))) out.push(`${edge.link.id}'s label is on ${card.name}`);
    }
  }
  return out;
}

describe('routing transitions', () => {
  it('draws the guessing game with every edge and label clear of the states, its loops back to the start routed', () => {
    const graph = graphOf(GUESSING_GAME_YAML);
    const positions = autoLayout(graph.cards, graph.links, graph.initial);
    expect(problems(graph, positions)).toEqual([]);
    const routed = drawnEdges(graph, positions).filter((e) => e.routed).map((e) => e.link.id).sort();
    expect(routed).toEqual(['lost→play_again', 'won→play_again']);
  });

  it.each([50, 200])('keeps every edge and label of a wrapped %i-state flow clear of the states', (states) => {
    const graph = graphOf(generateFlowYaml(states));
    const positions = autoLayout(graph.cards, graph.links, graph.initial);
    expect(problems(graph, positions)).toEqual([]);
  });

  it('routes round a state dragged into the way of an edge', () => {
    const graph = graphOf(GUESSING_GAME_YAML);
    const positions = autoLayout(graph.cards, graph.links, graph.initial);
    // won straight below setup, in the way of begin_game's edge to playing further down.
    const moved = { ...positions, playing: { x: positions.setup!.x, y: positions.setup!.y + 700 }, won: { x: positions.setup!.x, y: positions.setup!.y + 300 } };
    const begin = drawnEdges(graph, moved).find((e) => e.link.tool === 'begin_game')!;
    expect(begin.routed).toBe(true);
    expect(problems(graph, moved).filter((p) => p.startsWith('setup→begin_game'))).toEqual([]);
  });
});
