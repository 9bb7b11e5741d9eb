// The derived graph as xyflow nodes and edges: what is drawn where, which side an edge takes,
// what test-talk lights up, and that unchanged nodes stay the same objects (xyflow then skips
// measuring and redrawing them).
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import { talkMarks } from '../../../../../renderer/src/features/editor/graph/marks.ts';
import { NO_MARKS, buildEdges, buildNodes, remeasuredHandles, routeOf } from '../../../../../renderer/src/features/editor/graph/graph-view.ts';
import { autoLayout, estimateHeight } from '../../../../../server/flow/graph/layout.ts';
import { routeEdges } from '../../../../../server/flow/graph/edge-routes.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

const game = parseFlow(GUESSING_GAME_YAML).document as unknown as FlowData;
const graph = deriveGraph(game, []);
const positions = autoLayout(graph.cards, graph.links, graph.initial);

describe('nodes', () => {
  it('draws each placed state at its position, the selected one selected', () => {
    const nodes = buildNodes(graph, positions, ['won'], NO_MARKS, false, []);
    expect(nodes.map((n) => [n.id, n.position, n.selected])).toEqual(graph.cards.map((c) => [c.name, positions[c.name], c.name === 'won']));
    expect(nodes.every((n) => n.type === 'state' && n.draggable === true)).toBe(true);
  });

  it('leaves out a state that has no position yet', () => {
    const { lost: _lost, ...rest } = positions;
    expect(buildNodes(graph, rest, [], NO_MARKS, false, []).map((n) => n.id)).toEqual(['setup', 'playing', 'won']);
  });

  it('keeps unchanged nodes as the same objects, with what xyflow measured on them', () => {
    const first = buildNodes(graph, positions, [], NO_MARKS, false, []).map((n) => ({ ...n, measured: { width: 240, height: 100 } }));
    const moved = { ...positions, won: { x: 999, y: 999 } };
    const second = buildNodes(graph, moved, [], NO_MARKS, false, first);
    expect(second[0]).toBe(first[0]);
    expect(second[2]).not.toBe(first[2]);
    expect(second[2]!.position).toEqual({ x: 999, y: 999 });
    expect(second[2]!.measured).toEqual({ width: 240, height: 100 });
  });

  it('lights the state test-talk is in and marks the ones it went through, and clears with a new session', () => {
    const marks = talkMarks({ live: true, activeState: 'playing', trail: ['setup', 'playing'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }], lastMove: { from: 'setup', to: 'playing', tool: 'begin_game' } }, graph.links);
    const nodes = buildNodes(graph, positions, [], marks, false, []);
    expect(Object.fromEntries(nodes.map((n) => [n.id, [n.data.talk, n.data.visits, n.data.pastRun]]))).toEqual({
      setup: ['visited', [1], false],
      playing: ['active', [2], false],
      won: [null, [], false],
      lost: [null, [], false],
    });
    // After the session the same states are marked as a past run.
    const ended = buildNodes(graph, positions, [], talkMarks({ live: false, activeState: 'playing', trail: ['setup', 'playing'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }], lastMove: null }, graph.links), false, nodes);
    expect(ended.filter((n) => n.data.pastRun).map((n) => n.id).sort()).toEqual(['playing', 'setup']);
    const fresh = buildNodes(graph, positions, [], talkMarks({ live: true, activeState: 'setup', trail: ['setup'], moves: [], lastMove: null }, graph.links), false, nodes);
    expect(fresh.find((n) => n.id === 'playing')!.data.talk).toBeNull();
  });

  it('gives a big flow\'s nodes their size and handles before they are drawn, and moves the handles to the measured height', () => {
    const small = buildNodes(graph, positions, [], NO_MARKS, false, []);
    expect(small.every((n) => n.handles === undefined && n.measured === undefined)).toBe(true);
    const big = buildNodes(graph, positions, [], NO_MARKS, false, small, true);
    const setup = big.find((n) => n.id === 'setup')!;
    const estimated = estimateHeight(graph.cards.find((c) => c.name === 'setup')!);
    expect(setup.measured).toEqual({ width: 240, height: estimated });
    const connector = (n: typeof setup) => n.handles!.find((h) => h.id === 'out')!;
    // The connector dot's centre is on the bottom border, the edge leaves from its bottom.
    expect(connector(setup).y + connector(setup).height! / 2).toBeCloseTo(estimated - 1.5);
    expect(remeasuredHandles(big)).toBeNull();
    // xyflow measured the drawn node 30 px taller than estimated.
    const measured = big.map((n) => (n.id === 'setup' ? { ...n, measured: { width: 240, height: estimated + 30 } } : n));
    const fixed = remeasuredHandles(measured)!;
    expect(connector(fixed.find((n) => n.id === 'setup')!).y + 7).toBeCloseTo(estimated + 30 - 1.5);
    expect(fixed.filter((n, i) => n !== measured[i]).map((n) => n.id)).toEqual(['setup']);
    expect(remeasuredHandles(fixed)).toBeNull();
  });

  it('makes a stale graph read-only', () => {
    expect(buildNodes(graph, positions, [], NO_MARKS, true, []).every((n) => n.draggable === false && n.connectable === false && n.data.stale)).toBe(true);
  });
});

describe('edges', () => {
  it('draws every transition and self-loop with its tool, and highlights the moves test-talk took', () => {
    const marks = talkMarks({ live: true, activeState: 'playing', trail: ['setup', 'playing'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }], lastMove: { from: 'setup', to: 'playing', tool: 'begin_game' } }, graph.links);
    const edges = buildEdges(graph, positions, marks, []);
    expect(edges).toHaveLength(7);
    const begin = edges.find((e) => e.data!.link.tool === 'begin_game')!;
    expect(begin.data).toMatchObject({ taken: [2], last: true, route: 'down' });
    expect(begin.ariaLabel).toBe('begin_game: setup to playing');
    expect(edges.filter((e) => e.data!.route === 'loop').map((e) => e.data!.link.tool)).toEqual(['record_answer', 'guess_wrong']);
  });

  it("lights and counts a staying tool's self-loop, and marks a past run's edges", () => {
    const RA = { from: 'playing', to: 'playing', tool: 'record_answer' };
    const overlay = { activeState: 'playing', trail: ['setup', 'playing'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }, RA, RA], lastMove: RA };
    const live = buildEdges(graph, positions, talkMarks({ ...overlay, live: true }, graph.links), []);
    expect(live.find((e) => e.id === 'playing→record_answer')!.data).toMatchObject({ stays: 2, last: true, pastRun: false });
    expect(live.find((e) => e.id === 'playing→guess_wrong')!.data).toMatchObject({ stays: 0, last: false });
    const past = buildEdges(graph, positions, talkMarks({ ...overlay, live: false, lastMove: null }, graph.links), live);
    expect(past.find((e) => e.id === 'playing→record_answer')!.data).toMatchObject({ stays: 2, last: false, pastRun: true });
    expect(past.find((e) => e.id === 'setup→begin_game')!.data).toMatchObject({ taken: [2], pastRun: true });
  });

  it('goes down to a state below, across to one beside, and routed back up', () => {
    const link = graph.links.find((l) => l.tool === 'begin_game')!;
    expect(routeOf(link, { setup: { x: 0, y: 0 }, playing: { x: 0, y: 300 } })).toBe('down');
    expect(routeOf(link, { setup: { x: 0, y: 0 }, playing: { x: 400, y: 10 } })).toBe('east');
    expect(routeOf(link, { setup: { x: 400, y: 0 }, playing: { x: 0, y: 10 } })).toBe('west');
    expect(routeOf(link, { setup: { x: 0, y: 300 }, playing: { x: 100, y: 0 } })).toBe('up');
    const paths = routeEdges(graph.cards, graph.links, positions);
    const back = buildEdges(graph, positions, NO_MARKS, [], paths).find((e) => e.id === 'won→play_again')!;
    expect(back.data!.route).toBe('up');
    expect(back.data!.path!.corners.length).toBeGreaterThanOrEqual(4);
  });
});
