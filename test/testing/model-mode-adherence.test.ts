// A model run reports the adherence figure: every tool call the model tried, by the state it was
// in, and what the flow refused. A model that tries to leave its state is refused every time, and
// the test still passes when the model comes back to the state's own tool.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { prettyReport } from '../../server/testing/reporters.ts';
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

describe('the adherence figure of a model run', () => {
  it('counts the calls the flow refused and the moves, over the runs and by state; a scripted run has none', async () => {
    // Per run: the greeting, then calls answering "I'm ready" until the model speaks.
    const model = scriptedModel([
      { text: 'Welcome!' },
      // Run 1: a tool of `playing` while in setup, then begin_game without its argument, then right.
      { toolCalls: [{ name: 'guess_correct', arguments: {} }] },
      { toolCalls: [{ name: 'begin_game', arguments: {} }] },
      { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a cat' } }] },
      { text: 'Ask away!' },
      { text: 'Welcome!' },
      // Run 2: straight to it.
      { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a pear' } }] },
      { text: 'Ask away!' },
    ]);
    const result = await runTests(GAME, TESTS, { mode: 'model', repeat: 2, providers: { llm: model } });
    const test = result.tests[0]!;
    expect(test.runs.map((r) => r.passed)).toEqual([true, true]);
    expect(test.adherence).toEqual({
      tool_calls: 4,
      moves: 2,
      rejected_off_state: 1,
      rejected_arguments: 1,
      rejected_other: 0,
      by_state: { setup: { tool_calls: 4, moves: 2, rejected_off_state: 1, rejected_arguments: 1, rejected_other: 0 } },
    });
    expect(prettyReport(result, 'game')).toContain('adherence: 4 tool calls by the model, 2 moves; refused: 1 not offered by the state, 1 with arguments that did not fit');

    const scripted = await runTests(GAME, TESTS, { mode: 'scripted', providers: {} });
    expect(scripted.tests[0]!.adherence).toBeNull();
    expect(prettyReport(scripted, 'game')).not.toContain('adherence');
  });
});
