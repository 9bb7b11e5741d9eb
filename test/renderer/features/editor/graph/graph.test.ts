// The graph the editor draws from a flow: one node per state, one labelled edge per transition,
// a self-loop per staying tool, the initial state marked, problems counted on their state.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import { analyzeFlowText } from '../../../../../server/flow/graph/analyze.ts';
import { deriveGraph, excerpt, readingOrder } from '../../../../../server/flow/graph/graph.ts';
import { talkMarks } from '../../../../../renderer/src/features/editor/graph/marks.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

const game = parseFlow(GUESSING_GAME_YAML).document as unknown as FlowData;

describe('deriving the graph of the guessing game', () => {
  const graph = deriveGraph(game, []);

  it('has a node per state, in document order, with the initial state marked', () => {
    expect(graph.cards.map((c) => c.name)).toEqual(['setup', 'playing', 'won', 'lost']);
    expect(graph.cards.filter((c) => c.initial).map((c) => c.name)).toEqual(['setup']);
    expect(graph.initial).toBe('setup');
  });

  it('labels every transition with its tool', () => {
    const moves = graph.links.filter((l) => !l.selfLoop).map((l) => `${l.source} -${l.tool}-> ${l.target}`);
    expect(moves).toEqual([
      'setup -begin_game-> playing',
      'playing -guess_correct-> won',
      'playing -out_of_questions-> lost',
      'won -play_again-> setup',
      'lost -play_again-> setup',
    ]);
  });

  it('draws a self-loop for each listed tool that has no transition', () => {
    const loops = graph.links.filter((l) => l.selfLoop);
    expect(loops.map((l) => [l.source, l.target, l.tool, l.index, l.count])).toEqual([
      ['playing', 'playing', 'record_answer', 0, 2],
      ['playing', 'playing', 'guess_wrong', 1, 2],
    ]);
  });

  it('shows the card prompt as an excerpt and the tools as chips', () => {
    const playing = graph.cards.find((c) => c.name === 'playing')!;
    expect(playing.excerpt).toBe('Ask yes-or-no questions, or name your guess. Questions asked: {questions_asked} of 10.');
    expect(playing.tools.map((t) => `${t.name}:${t.kind}`)).toEqual([
      'record_answer:stay',
      'guess_correct:move',
      'guess_wrong:stay',
      'out_of_questions:move',
    ]);
  });

  it('hands back the same objects when nothing changed, and new ones only for what did', () => {
    expect(deriveGraph(game, [], graph)).toBe(graph);
    const edited = structuredClone(game) as any;
    edited.states.won.ui.prompt = 'Well done!';
    const next = deriveGraph(edited, [], graph);
    expect(next).not.toBe(graph);
    expect(next.cards[0]).toBe(graph.cards[0]);
    expect(next.cards[2]).not.toBe(graph.cards[2]);
    expect(next.cards[2]!.excerpt).toBe('Well done!');
    expect(next.links.every((l, i) => l === graph.links[i])).toBe(true);
  });
});

describe('deriving the graph of a flow with errors', () => {
  it('keeps drawing, marks a transition to an unknown state on its chip and counts the error on the state', () => {
    const broken = GUESSING_GAME_YAML.replace('guess_correct: won', 'guess_correct: winner');
    const analysis = analyzeFlowText(broken);
    expect(analysis.document).toBeNull();
    const graph = deriveGraph(analysis.data, analysis.diagnostics);
    const playing = graph.cards.find((c) => c.name === 'playing')!;
    expect(playing.errors).toBe(1);
    expect(playing.tools.find((t) => t.name === 'guess_correct')).toEqual({ name: 'guess_correct', kind: 'dangling', target: 'winner' });
    expect(graph.links.some((l) => l.tool === 'guess_correct')).toBe(false);
  });

  it('draws nothing from text that is not YAML', () => {
    const analysis = analyzeFlowText('states: [unclosed');
    expect(analysis.data).toBeNull();
    expect(deriveGraph(analysis.data, analysis.diagnostics).cards).toEqual([]);
  });
});

describe('the test-talk overlay on the graph', () => {
  const graph = deriveGraph(game, []);

  it('numbers the visited states and the moves taken, in order, and names the latest move', () => {
    const marks = talkMarks(
      {
        live: true,
        activeState: 'setup',
        trail: ['setup', 'playing', 'won', 'setup'],
        moves: [
          { from: 'setup', to: 'playing', tool: 'begin_game' },
          { from: 'playing', to: 'playing', tool: 'record_answer' },
          { from: 'playing', to: 'won', tool: 'guess_correct' },
          { from: 'won', to: 'setup', tool: 'play_again' },
        ],
        lastMove: { from: 'won', to: 'setup', tool: 'play_again' },
      },
      graph.links,
    );
    expect(marks.active).toBe('setup');
    expect(Object.fromEntries(marks.visits)).toEqual({ setup: [1, 4], playing: [2], won: [3] });
    expect(Object.fromEntries(marks.taken)).toEqual({ 'setup→begin_game': [2], 'playing→guess_correct': [3], 'won→play_again': [4] });
    expect(Object.fromEntries(marks.loops)).toEqual({ 'playing→record_answer': 1 });
    expect(marks.lastLink).toBe('won→play_again');
    expect(marks.live).toBe(true);
  });

  it('lights the edge of the tool that was called, numbered with the step it entered', () => {
    const lost = graph.links.find((l) => l.source === 'playing' && l.target === 'lost')!;
    const marks = talkMarks(
      {
        live: true,
        activeState: 'lost',
        trail: ['setup', 'playing', 'lost'],
        moves: [
          { from: 'setup', to: 'playing', tool: 'begin_game' },
          { from: 'playing', to: 'lost', tool: lost.tool },
        ],
        lastMove: { from: 'playing', to: 'lost', tool: lost.tool },
      },
      graph.links,
    );
    expect(marks.taken.get(lost.id)).toEqual([3]);
  });

  it('marks nothing before a session starts', () => {
    const marks = talkMarks({ live: false, activeState: null, trail: [], moves: [], lastMove: null }, graph.links);
    expect(marks.visits.size + marks.taken.size + marks.loops.size).toBe(0);
    expect(marks.lastLink).toBeNull();
  });
});

it('shortens long card prompts on one line', () => {
  expect(excerpt('a\n  b')).toBe('a b');
  expect(excerpt('x'.repeat(200))).toHaveLength(110);
  expect(excerpt('x'.repeat(200)).endsWith('…')).toBe(true);
});

describe("the reading order of the states (the canvas's Tab order)", () => {
  it('starts at the start state and follows the transitions breadth-first, whatever the YAML order', () => {
    const game = parseFlow(GUESSING_GAME_YAML).document as unknown as FlowData;
    const reordered = { ...game, states: Object.fromEntries(Object.entries(game.states as object).reverse()) } as FlowData;
    expect(readingOrder(deriveGraph(reordered, []))).toEqual(['setup', 'playing', 'won', 'lost']);
  });

  it('puts states the start cannot reach after the others, in the YAML order', () => {
    const game = parseFlow(GUESSING_GAME_YAML).document as any;
    const withIslands = { ...game, states: { island_b: { agent: { prompt: 'b', tools: [] } }, ...game.states, island_a: { agent: { prompt: 'a', tools: [] } } } };
    expect(readingOrder(deriveGraph(withIslands, []))).toEqual(['setup', 'playing', 'won', 'lost', 'island_b', 'island_a']);
  });
});
