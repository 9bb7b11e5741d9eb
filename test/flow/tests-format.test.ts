// The flow-test format: a designer's mistakes are reported all at once, each where it is, and the
// coverage of a flow is counted per state, per tool of each state, and per tool.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { flowCoverage, flowTransitions } from '../../server/flow/tests-coverage.ts';
import { matchesPattern, parseFlowTests, splitSuite, suiteText } from '../../server/flow/tests-format.ts';

const GAME = parseFlow(readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8')).document!;

describe('parsing flow tests', () => {
  it('reads a single test with its steps and expectations', () => {
    const result = parseFlowTests(['name: start', 'steps:', '  - user: "I\'m ready"', '    expect:', '      tool_called: {name: begin_game, arguments: {secret_thing: cat}}', '      state: playing', ''].join('\n'), GAME);
    expect(result.diagnostics).toEqual([]);
    expect(result.shape).toBe('test');
    expect(result.tests).toEqual([
      { name: 'start', steps: [{ user: "I'm ready", expect: { tool_called: { name: 'begin_game', arguments: { secret_thing: 'cat' } }, state: 'playing' } }] },
    ]);
  });

  it('reports every problem of a suite with its line and column, and accepts none of it', () => {
    const text = [
      'tests:',
      '  - name: one',
      '    steps:',
      '      - user: hi',
      '        simulate: {tool: begin_game}',
      '        expect: {state: plying, says: "/(/", sayz: hello}',
      '      - barge_in_after_ms: -5',
      '  - name: two',
      '    stepz: []',
      '',
    ].join('\n');
    const result = parseFlowTests(text, GAME);
    expect(result.tests).toBeNull();
    const found = result.diagnostics.map((d) => `${d.severity} ${d.code} ${d.line}:${d.column}`);
    expect(found).toEqual([
      'error two_actions 5:9',
      'error invalid_pattern 6:39',
      'error unknown_key 6:46',
      'error nothing_to_check 7:9',
      'error wrong_type 7:28',
      'error missing_key 8:5',
      'error unknown_key 9:5',
      'warning unknown_state 6:25',
    ]);
    expect(result.diagnostics.find((d) => d.code === 'unknown_state')!.message).toContain('its states: setup, playing, won, lost');
  });

  it('refuses YAML that does not parse, at the place it breaks', () => {
    const result = parseFlowTests('name: x\nsteps: [\n');
    expect(result.tests).toBeNull();
    expect(result.diagnostics[0]).toMatchObject({ code: 'yaml_syntax', severity: 'error', line: 3 });
  });

  it('exports stored tests as one suite file and splits it back into the same tests', () => {
    const one = 'name: one\n# how a game starts\nsteps:\n  - user: ready\n    expect: {state: playing}\n';
    const two = 'name: two\nsteps:\n  - simulate: {tool: begin_game, arguments: {secret_thing: cat}}\n';
    const suite = suiteText([{ yaml: one }, { yaml: two }], 'guessing-game');
    const parsed = parseFlowTests(suite, GAME);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.tests!.map((t) => t.name)).toEqual(['one', 'two']);
    expect(splitSuite(suite)).toEqual([one, two]);
  });

  it('matches text as /regex/flags or case-insensitively anywhere', () => {
    expect(matchesPattern('/^yes/i', "Yes! That's it!")).toBe(true);
    expect(matchesPattern('/^it/', "Yes! That's it!")).toBe(false);
    expect(matchesPattern("that's IT", "Yes! That's it!")).toBe(true);
  });
});

describe('coverage of a flow', () => {
  it('counts a transition per tool of each state, staying tools included', () => {
    expect(flowTransitions(GAME).map((t) => `${t.from}.${t.tool}→${t.to}`)).toEqual([
      'setup.begin_game→playing',
      'playing.record_answer→playing',
      'playing.guess_correct→won',
      'playing.guess_wrong→playing',
      'playing.out_of_questions→lost',
      'won.play_again→setup',
      'lost.play_again→setup',
    ]);
    const coverage = flowCoverage(GAME, {
      states: ['setup', 'playing', 'won'],
      transitions: [{ from: 'setup', tool: 'begin_game', to: 'playing' }, { from: 'playing', tool: 'guess_correct', to: 'won' }, { from: 'won', tool: 'play_again', to: 'setup' }],
    });
    expect(coverage.states.uncovered).toEqual(['lost']);
    expect(coverage.transitions.uncovered.map((t) => `${t.from}.${t.tool}`)).toEqual(['playing.record_answer', 'playing.guess_wrong', 'playing.out_of_questions', 'lost.play_again']);
    // play_again was exercised from won, so the tool counts as reached.
    expect(coverage.tools.uncovered).toEqual(['record_answer', 'guess_wrong', 'out_of_questions']);
    expect(coverage.transitions.fraction).toBeCloseTo(3 / 7);
  });

  it('counts a global tool once, as a tool, not as a transition of every state', () => {
    const flow = parseFlow(`id: desk
version: "1.0.0"
initial_state: ask
settings:
  global_tools:
    start_over: {target: ask}
tools:
  start_over: {description: Start again.}
states:
  ask:
    agent: {prompt: Ask., tools: [answer]}
    tools:
      answer: {description: Answered.}
    transitions: {on_tool_call: {answer: done}}
  done:
    agent: {prompt: Done.}
`).document!;
    expect(flowTransitions(flow).map((t) => `${t.from}.${t.tool}`)).toEqual(['ask.answer']);
    const coverage = flowCoverage(flow, { states: ['ask', 'done'], transitions: [{ from: 'done', tool: 'start_over', to: 'ask' }] });
    expect(coverage.tools).toMatchObject({ covered: ['start_over'], uncovered: ['answer'] });
    expect(coverage.transitions.uncovered.map((t) => t.tool)).toEqual(['answer']);
  });
});
