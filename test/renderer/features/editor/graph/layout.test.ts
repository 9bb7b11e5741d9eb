// Where states sit: dagre's layered layout from the initial state on a fresh flow, and a new
// state placed next to a state it connects to without moving the ones already placed.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import { NODE_WIDTH, autoLayout, estimateHeight, forwardEdges, freeSpot, loopRoom, placeMissing, renamedStates } from '../../../../../server/flow/graph/layout.ts';
import { addState, addTool } from '../../../../../renderer/src/features/editor/document/operations.ts';
import { groupedView } from '../../../../../renderer/src/features/editor/graph/groups.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

const game = parseFlow(GUESSING_GAME_YAML).document as unknown as FlowData;
const graph = deriveGraph(game, []);

function overlapping(positions: Record<string, { x: number; y: number }>, heights: Map<string, number>): string[] {
  const names = Object.keys(positions);
  const out: string[] = [];
  for (const a of names)
    for (const b of names) {
      if (a >= b) continue;
      const p = positions[a]!;
      const q = positions[b]!;
      if (p.x < q.x + NODE_WIDTH && q.x < p.x + NODE_WIDTH && p.y < q.y + heights.get(b)! && q.y < p.y + heights.get(a)!) out.push(`${a}/${b}`);
    }
  return out;
}

describe('auto-layout', () => {
  it('puts the initial state on top and each move below the state it leaves, with no overlaps', () => {
    const positions = autoLayout(graph.cards, graph.links, graph.initial);
    expect(Object.keys(positions).sort()).toEqual(['lost', 'playing', 'setup', 'won']);
    expect(positions.setup!.y).toBeLessThan(positions.playing!.y);
    expect(positions.playing!.y).toBeLessThan(positions.won!.y);
    expect(positions.won!.y).toBe(positions.lost!.y);
    expect(overlapping(positions, new Map(graph.cards.map((c) => [c.name, estimateHeight(c)])))).toEqual([]);
  });

  it('ranks by the moves forward from the initial state; loops back do not count', () => {
    expect(forwardEdges(['setup', 'playing', 'won', 'lost'], graph.links, 'setup')).toEqual([
      ['setup', 'playing'],
      ['playing', 'won'],
      ['playing', 'lost'],
    ]);
  });

  it('wraps a 50-state chain into bands side by side, about as wide as a canvas, each band starting at the top', () => {
    const chain = deriveGraph(parseFlow(generateFlowYaml(50)).document as unknown as FlowData, []);
    const positions = autoLayout(chain.cards, chain.links, chain.initial);
    const heights = new Map(chain.cards.map((c) => [c.name, estimateHeight(c) + 0]));
    const xs = Object.values(positions).map((p) => p.x);
    const ys = Object.values(positions).map((p) => p.y);
    const width = Math.max(...xs) + NODE_WIDTH - Math.min(...xs);
    const height = Math.max(...Object.entries(positions).map(([n, p]) => p.y + heights.get(n)!)) - Math.min(...ys);
    expect(width / height).toBeGreaterThan(0.8);
    expect(width / height).toBeLessThan(2.5);
    // Bands: the states at the top of the layout are the first of each band, in order.
    const tops = Object.entries(positions).filter(([, p]) => p.y === Math.min(...ys)).map(([n]) => Number(n.slice(1))).sort((a, b) => a - b);
    expect(tops.length).toBeGreaterThanOrEqual(3);
    expect(tops[0]).toBe(0);
    expect(overlapping(positions, heights)).toEqual([]);
  });

  it('lays out a generated 200-state flow (ranked by a tight tree, above 100 states) as it does 50: in bands, each move below the state it leaves, no overlaps', () => {
    const big = parseFlow(generateFlowYaml(200)).document as unknown as FlowData;
    const bigGraph = deriveGraph(big, []);
    const positions = autoLayout(bigGraph.cards, bigGraph.links, bigGraph.initial);
    expect(Object.keys(positions)).toHaveLength(200);
    const heights = new Map(bigGraph.cards.map((c) => [c.name, estimateHeight(c)]));
    expect(overlapping(positions, heights)).toEqual([]);
    const xs = Object.values(positions).map((p) => p.x);
    const ys = Object.values(positions).map((p) => p.y);
    const width = Math.max(...xs) + NODE_WIDTH - Math.min(...xs);
    const height = Math.max(...Object.entries(positions).map(([n, p]) => p.y + heights.get(n)!)) - Math.min(...ys);
    expect(width / height).toBeGreaterThan(0.8);
    expect(width / height).toBeLessThan(2.5);
    // Within a band, s(i+1) is below s(i); a new band starts again at the top.
    const down = bigGraph.cards.slice(1).filter((c, i) => positions[c.name]!.y > positions[bigGraph.cards[i]!.name]!.y).length;
    const tops = Object.values(positions).filter((p) => p.y === Math.min(...ys)).length;
    expect(down + tops - 1).toBe(199);
  });
});

describe('placing states that have no position', () => {
  const positions = autoLayout(graph.cards, graph.links, graph.initial);

  it("keeps each group's states together: the frames round groups do not overlap, even where groups do not follow the flow's structure", () => {
    // A fan: from the start, four branches of three states each, every branch back to the start;
    // the states of one rank are grouped across branches (the first steps of two branches in one
    // group, and so on), so a flat layout interleaves the groups in each rank.
    const lines = ['id: fan', 'version: "1.0.0"', 'initial_state: start', 'states:', '  start:', '    agent: { prompt: Pick., tools: [b0, b1, b2, b3] }'];
    lines.push('    tools: { b0: { description: x }, b1: { description: x }, b2: { description: x }, b3: { description: x } }');
    lines.push('    transitions: { on_tool_call: { b0: s0_0, b1: s1_0, b2: s2_0, b3: s3_0 } }');
    for (let branch = 0; branch < 4; branch++)
      for (let step = 0; step < 3; step++) {
        const next = step < 2 ? `s${branch}_${step + 1}` : 'start';
        lines.push(`  s${branch}_${step}:`, `    group: g${(branch + step) % 4}`, '    agent: { prompt: Go., tools: [go] }', '    tools: { go: { description: x } }', `    transitions: { on_tool_call: { go: ${next} } }`);
      }
    const fan = deriveGraph(parseFlow(lines.join('\n')).document as unknown as FlowData, []);
    const positions = autoLayout(fan.cards, fan.links, fan.initial);
    const heights = new Map(fan.cards.map((c) => [c.name, estimateHeight(c)]));
    expect(overlapping(positions, heights)).toEqual([]);
    const frames = groupedView(fan, positions, new Set()).frames;
    expect(new Set(frames.map((f) => f.name))).toEqual(new Set(['g0', 'g1', 'g2', 'g3']));
    const crossing: string[] = [];
    for (const a of frames)
      for (const b of frames)
        if (a.name < b.name && a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) crossing.push(`${a.name}/${b.name}`);
    expect(crossing).toEqual([]);
  });

  it('keeps every given position and puts a new state below the state that leads to it', () => {
    const data = addTool(addState(game, 'hint'), 'playing', { name: 'give_hint', description: 'Give a hint.', target: 'hint' });
    const next = deriveGraph(data, []);
    const placed = placeMissing(positions, next.cards, next.links);
    for (const name of Object.keys(positions)) expect(placed[name]).toEqual(positions[name]);
    expect(placed.hint!.y).toBeGreaterThan(positions.playing!.y);
    expect(overlapping(placed, new Map(next.cards.map((c) => [c.name, estimateHeight(c)])))).toEqual([]);
  });

  it('puts an unconnected state to the right of everything', () => {
    const next = deriveGraph(addState(game, 'island'), []);
    const placed = placeMissing(positions, next.cards, next.links);
    const right = Math.max(...Object.values(positions).map((p) => p.x + NODE_WIDTH));
    expect(placed.island!.x).toBeGreaterThan(right);
  });

  it('carries the position of a state renamed in the YAML over to its new name', () => {
    expect(renamedStates(['setup', 'won'], ['lobby', 'won'])).toEqual({ lobby: 'setup' });
    expect(renamedStates(['a', 'b'], ['c', 'd', 'b'])).toEqual({});
    const renamed = structuredClone(game) as any;
    renamed.states = { lobby: renamed.states.setup, playing: renamed.states.playing, won: renamed.states.won, lost: renamed.states.lost };
    const next = deriveGraph(renamed, []);
    expect(placeMissing(positions, next.cards, next.links, { lobby: 'setup' }).lobby).toEqual(positions.setup);
  });
});

describe('a free place for a new state', () => {
  it('keeps the asked place when it is free, and moves off a state that is there', () => {
    const positions = autoLayout(graph.cards, graph.links, graph.initial);
    expect(freeSpot(positions, graph.cards, { x: 5000, y: 5000 })).toEqual({ x: 5000, y: 5000 });
    const onPlaying = freeSpot(positions, graph.cards, positions.playing!);
    expect(onPlaying).not.toEqual(positions.playing);
    const heights = new Map(graph.cards.map((c) => [c.name, estimateHeight(c)]));
    heights.set('new', 100);
    expect(overlapping({ ...positions, new: onPlaying }, heights)).toEqual([]);
  });
});

describe('room for self-loops', () => {
  it("keeps a new state off a state's self-loops and their labels", () => {
    const positions = autoLayout(graph.cards, graph.links, graph.initial);
    const playing = graph.cards.find((c) => c.name === 'playing')!;
    expect(loopRoom(playing)).toBeGreaterThan(150);
    // Asked for the spot right beside playing, where its loop labels are.
    const spot = freeSpot(positions, graph.cards, { x: positions.playing!.x + NODE_WIDTH + 40, y: positions.playing!.y });
    const labelsEnd = positions.playing!.x + NODE_WIDTH + loopRoom(playing);
    const clearOfLabels = spot.x >= labelsEnd || spot.y >= positions.playing!.y + estimateHeight(playing) || spot.y + 100 <= positions.playing!.y;
    expect(clearOfLabels).toBe(true);
  });
});
