// The guessing game's own test suite, run scripted (no model): it passes, reaches every state and
// transition of the flow, and a wrong expectation or a call the flow refuses fails with what was
// expected against what happened.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests, type FlowTest } from '../../server/flow/tests-format.ts';
import { runTests } from '../../server/testing/run-tests.ts';

const read = (name: string) => readFileSync(new URL(`../../resources/flows/${name}`, import.meta.url), 'utf8');
const GAME = parseFlow(read('guessing-game.yaml')).document!;
const SUITE = parseFlowTests(read('guessing-game.tests.yaml'), GAME);

function oneTest(yaml: string): FlowTest[] {
  const parsed = parseFlowTests(yaml, GAME);
  expect(parsed.diagnostics).toEqual([]);
  return parsed.tests!;
}

describe('the guessing game suite, scripted', () => {
  it('is valid against the flow and passes, covering every state, transition and tool', async () => {
    expect(SUITE.diagnostics).toEqual([]);
    const result = await runTests(GAME, SUITE.tests!, { mode: 'scripted', providers: {} });
    const failures = result.tests.flatMap((t) => t.runs[0]!.steps.filter((s) => !s.passed).map((s) => `${t.name} #${s.index}: ${s.checks.map((c) => c.message).join('; ')}`));
    expect(failures).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.coverage.states.uncovered).toEqual([]);
    expect(result.coverage.transitions.uncovered).toEqual([]);
    expect(result.coverage.tools.uncovered).toEqual([]);
    expect(result.coverage.transitions.covered).toHaveLength(7);
  });

  it('reports each step with its transcript, its calls and its path', async () => {
    const result = await runTests(GAME, SUITE.tests!.slice(0, 1), { mode: 'scripted', providers: {} });
    const run = result.tests[0]!.runs[0]!;
    expect(run.path).toEqual(['setup', 'playing', 'won', 'setup']);
    const win = run.steps[4]!;
    expect(win.action).toBe('user: Is it a cat?');
    expect(win.tool_calls).toEqual([{ name: 'guess_correct', arguments: {}, status: 'accepted', reason: null, source: 'model', from_state: 'playing', to_state: 'won' }]);
    expect(win.path).toEqual(['won']);
    // The barge-in cut the celebration a little way in: what was heard is what the transcript keeps.
    const cut = run.steps[5]!;
    expect(cut.transcript[0]).toEqual({ role: 'agent', text: 'Yes!', interrupted: true });
    expect(cut.state).toBe('won');
  });

  it('fails a step whose expectations differ, saying what was expected and what happened', async () => {
    const tests = oneTest(`
name: wrong guesses
steps:
  - user: ready
    expect:
      tool_called: {name: begin_game, arguments: {secret_thing: a cat}}
      state: won
      variables: {secret_thing: a dog}
      says: "/your first question/"
      card: "Questions asked: 3"
`);
    const result = await runTests(GAME, tests, { mode: 'scripted', providers: {} });
    expect(result.passed).toBe(false);
    const step = result.tests[0]!.runs[0]!.steps[0]!;
    expect(step.passed).toBe(false);
    const failed = Object.fromEntries(step.checks.filter((c) => !c.passed).map((c) => [c.check, { expected: c.expected, actual: c.actual }]));
    expect(failed).toEqual({
      state: { expected: 'won', actual: 'playing' },
      variables: { expected: { secret_thing: 'a dog' }, actual: { secret_thing: 'a cat' } },
      says: { expected: '/your first question/', actual: "Okay, I've got something in mind. Ask away!" },
      card: { expected: 'Questions asked: 3', actual: 'Ask yes-or-no questions, or name your guess. Questions asked:  of 10.' },
    });
    expect(step.checks.find((c) => c.check === 'tool_called')!.passed).toBe(true);
  });

  it('fails a call the flow does not allow in that state, with the runtime’s reason', async () => {
    const tests = oneTest(`
name: a win without a game
steps:
  - user: "is it a cat?"
    expect: {tool_called: {name: guess_correct}, state: won}
`);
    const result = await runTests(GAME, tests, { mode: 'scripted', providers: {} });
    const step = result.tests[0]!.runs[0]!.steps[0]!;
    expect(step.tool_calls).toMatchObject([{ name: 'guess_correct', status: 'rejected', from_state: 'setup', to_state: 'setup' }]);
    expect(step.checks.find((c) => c.check === 'tool_called')!.message).toContain("tool 'guess_correct' is not available in state 'setup'");
    expect(step.checks.find((c) => c.check === 'state')).toMatchObject({ passed: false, actual: 'setup' });
  });

  it('says a barge-in that came after the agent had finished did not cut anything', async () => {
    const tests = oneTest(`
name: too late to cut in
steps:
  - simulate: {tool: begin_game, arguments: {secret_thing: a cat, questions_asked: "0"}}
  - user: "hello?"
    barge_in_after_ms: 5000
    expect: {interrupted: true}
`);
    const result = await runTests(GAME, tests, { mode: 'scripted', providers: {} });
    const check = result.tests[0]!.runs[0]!.steps[1]!.checks.find((c) => c.check === 'interrupted')!;
    expect(check).toMatchObject({ passed: false, expected: true, actual: false });
  });

  it('counts coverage per test: moving the game by hand reaches two transitions of seven', async () => {
    const result = await runTests(GAME, SUITE.tests!.filter((t) => t.name.includes('by hand')), { mode: 'scripted', providers: {} });
    expect(result.passed).toBe(true);
    expect(result.coverage.states.covered).toEqual(['setup', 'playing', 'won']);
    expect(result.coverage.transitions.covered.map((t) => `${t.from}.${t.tool}`)).toEqual(['setup.begin_game', 'playing.guess_correct']);
    expect(result.tests[0]!.coverage.transitions.fraction).toBeCloseTo(2 / 7);
  });
});

describe('a flow that ends the call', () => {
  const GOODBYE = parseFlow(`id: goodbye
version: "1.0.0"
initial_state: ask
states:
  ask:
    agent: {prompt: Ask whether they are done., tools: [finish]}
    tools:
      finish: {description: The caller is done.}
    transitions: {on_tool_call: {finish: bye}}
  bye:
    on_enter: {say: "Goodbye!", end_session: true}
    agent: {prompt: Say goodbye.}
`).document!;

  it('checks that the session ended, and fails the steps that could not happen after it', async () => {
    const tests = parseFlowTests(`
name: the caller leaves
steps:
  - user: "I'm done"
    expect: {tool_called: {name: finish}, state: bye, says: Goodbye, ended: true}
  - user: "Hello?"
`, GOODBYE).tests!;
    const result = await runTests(GOODBYE, tests, { mode: 'scripted', providers: {} });
    const [leaving, after] = result.tests[0]!.runs[0]!.steps;
    expect(leaving!.checks.map((c) => [c.check, c.passed])).toEqual([
      ['tool_called', true],
      ['state', true],
      ['says', true],
      ['ended', true],
    ]);
    expect(after).toMatchObject({ passed: false, action: 'user: Hello?', checks: [{ check: 'finished', message: 'the session had ended before this step' }] });
  });
});
