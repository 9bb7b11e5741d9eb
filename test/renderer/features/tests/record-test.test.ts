// Record → replay: a stored session of the guessing game becomes a test whose steps are what the
// caller said and did, whose expectations are the calls the flow accepted and the states it was
// in — and that test, replayed scripted against the flow, passes.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../server/flow/parse.ts';
import { parseFlowTests } from '../../../../server/flow/tests-format.ts';
import { runTests } from '../../../../server/testing/run-tests.ts';
import { recordedTest, type RecordedConversation } from '../../../../renderer/src/features/tests/record-test.ts';
import { GAME_YAML } from '../../../support/guessing-game-tests.ts';

// As GET /v1/sessions/{id} returns it (times in Unix seconds).
const SESSION: RecordedConversation = {
  path: [
    { state: 'setup', at: 100.0 },
    { state: 'playing', at: 103.2 },
    { state: 'won', at: 109.6 },
  ],
  transcript: [
    { role: 'agent', text: 'Welcome to ten questions!', at: 100.5 },
    { role: 'user', text: "I'm ready", at: 103.0 },
    { role: 'agent', text: "Okay, I've got something in mind. Ask away!", at: 103.2 },
    { role: 'user', text: 'Is it an animal?', at: 106.0 },
    { role: 'agent', text: 'Yes, it is.', at: 106.4 },
    { role: 'agent', text: "Yes! That's it!", at: 109.6 },
  ],
  tool_calls: [
    { name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' }, status: 'accepted', to_state: 'playing', source: 'model', at: 103.2 },
    { name: 'guess_correct', arguments: {}, status: 'rejected', to_state: 'playing', source: 'model', at: 106.1 },
    { name: 'record_answer', arguments: { last_answer: 'yes', questions_asked: '1' }, status: 'accepted', to_state: 'playing', source: 'model', at: 106.3 },
    // The designer moved the game on by hand from the studio's simulator.
    { name: 'guess_correct', arguments: {}, status: 'accepted', to_state: 'won', source: 'simulator', at: 109.6 },
  ],
};

describe('save as test', () => {
  it('turns what the caller said and did into steps, and what the flow accepted into expectations', () => {
    const yaml = recordedTest('caller wins after one question', SESSION);
    const game = parseFlow(GAME_YAML).document!;
    const parsed = parseFlowTests(yaml, game);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.tests).toEqual([
      {
        name: 'caller wins after one question',
        steps: [
          { user: "I'm ready", expect: { tool_called: { name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }, state: 'playing' } },
          // The rejected call is no expectation: the flow refused it.
          { user: 'Is it an animal?', expect: { tool_called: { name: 'record_answer', arguments: { last_answer: 'yes', questions_asked: '1' } }, state: 'playing' } },
          { simulate: { tool: 'guess_correct' }, expect: { state: 'won' } },
        ],
      },
    ]);
    expect(yaml.startsWith('# Recorded from a conversation')).toBe(true);
  });

  it('replays: the recorded test passes scripted against the flow it was recorded on', async () => {
    const game = parseFlow(GAME_YAML).document!;
    const tests = parseFlowTests(recordedTest('replayed', SESSION), game).tests!;
    const result = await runTests(game, tests, { mode: 'scripted', providers: {} });
    expect(result.tests[0]!.runs[0]!.steps.map((s) => [s.action, s.passed])).toEqual([
      ["user: I'm ready", true],
      ['user: Is it an animal?', true],
      ['simulate: guess_correct', true],
    ]);
  });
});
