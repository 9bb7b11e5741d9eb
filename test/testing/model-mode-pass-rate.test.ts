// Model mode runs a test several times, because a model does not answer the same way every time:
// the result gives the pass rate and says, for a failed run, which call the model did not make.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { scriptedModel } from '../fakes/scripted-providers.ts';
import { GAME_YAML } from '../support/guessing-game-tests.ts';

const GAME = parseFlow(GAME_YAML).document!;
const TESTS = parseFlowTests(`
name: the game starts when the caller is ready
steps:
  - user: "I'm ready"
    expect:
      tool_called: {name: begin_game}
      state: playing
`, GAME).tests!;

describe('model mode', () => {
  it('reports the share of runs that passed, and fails below the pass rate asked for', async () => {
    // Greeting, then the answer to "I'm ready", per run: the second run forgets to start the game.
    const model = scriptedModel([
      { text: 'Welcome!' },
      { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a cat' } }] },
      { text: 'Ask away!' },
      { text: 'Welcome!' },
      { text: 'Great, let us begin!' },
      { text: 'Welcome!' },
      { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a pear' } }] },
      { text: 'Ask away!' },
      { text: 'Welcome!' },
      { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a dog' } }] },
      { text: 'Ask away!' },
    ]);
    const strict = await runTests(GAME, TESTS, { mode: 'model', repeat: 2, providers: { llm: model } });
    const test = strict.tests[0]!;
    expect(test.runs.map((r) => r.passed)).toEqual([true, false]);
    expect(test.pass_rate).toBe(0.5);
    expect(test.passed).toBe(false);
    expect(test.runs[1]!.steps[0]!.checks.find((c) => c.check === 'tool_called')!.message).toBe('expected begin_game() to be called; saw no accepted call');
    expect(test.runs[1]!.transcript).toEqual([
      { role: 'agent', text: 'Welcome!' },
      { role: 'user', text: "I'm ready" },
      { role: 'agent', text: 'Great, let us begin!' },
    ]);
    // The model was given the state's tools, the flow's rules at work.
    expect(model.requests[1]!.tools).toEqual(['begin_game']);

    const lenient = await runTests(GAME, TESTS, { mode: 'model', repeat: 2, minPassRate: 0.5, providers: { llm: model } });
    expect(lenient.tests[0]!.pass_rate).toBe(1);
    expect(lenient.passed).toBe(true);
  });

  it('refuses to run without a model, saying how to configure one', async () => {
    await expect(runTests(GAME, TESTS, { mode: 'model', providers: {} })).rejects.toThrow(/VOXFLOW_LLM_PROVIDER/);
  });
});
