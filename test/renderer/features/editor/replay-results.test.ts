// What "Replay recorded calls" shows per recorded call: the same path, the turn where the draft's
// path left the recorded one (the recorded state against the draft's), or why it could not be
// replayed; and a test's adherence figure as the Tests tab words it.
import { describe, expect, it } from 'vitest';
import { replayOutcomes } from '../../../../renderer/src/features/editor/toolbar/replay-results.ts';
import { adherenceLine } from '../../../../renderer/src/features/tests/test-results.ts';

const check = (check: string, passed: boolean, expected: unknown, actual: unknown) => ({ check, passed, expected, actual, message: `${check} ${passed ? 'ok' : 'failed'}` });
const step = (index: number, action: string, checks: ReturnType<typeof check>[]) => ({ index, action, passed: checks.every((c) => c.passed), checks, transcript: [], path: [], state: '', tool_calls: [] });
const test = (session: string, passed: boolean, steps: ReturnType<typeof step>[], error: string | null = null) => ({
  name: `replay of session ${session}`,
  passed,
  runs: [{ passed, steps, transcript: [], path: [], exercised: { states: [], transitions: [] }, duration_ms: 1, error }],
});

describe('replay outcomes', () => {
  it('names the first turn whose state left the recorded path, with both states, and links the session', () => {
    const outcomes = replayOutcomes([
      test('s-1', false, [step(0, 'user: hello', [check('state', true, 'setup', 'setup')]), step(1, "user: I'm ready", [check('state', false, 'playing', 'setup')]), step(2, 'user: is it red?', [check('state', false, 'playing', 'setup')])]),
      test('s-2', true, [step(0, 'user: What is this game?', [check('state', true, 'setup', 'setup')])]),
      test('s-3', false, [], 'the model did not answer'),
    ] as never);
    expect(outcomes).toEqual([
      { sessionId: 's-1', name: 'replay of session s-1', kind: 'changed', where: { step: 2, said: "I'm ready", recorded: 'playing', draft: 'setup' } },
      { sessionId: 's-2', name: 'replay of session s-2', kind: 'same' },
      { sessionId: 's-3', name: 'replay of session s-3', kind: 'failed', error: 'the model did not answer' },
    ]);
  });
});

describe('the adherence line', () => {
  it('says what the model tried and what the flow refused, and nothing in scripted mode', () => {
    expect(adherenceLine(null)).toBeNull();
    expect(adherenceLine({ tool_calls: 1, moves: 1, rejected_off_state: 0, rejected_arguments: 0, rejected_other: 0, by_state: {} })).toBe('1 tool call by the model, 1 move; none refused');
    expect(adherenceLine({ tool_calls: 7, moves: 3, rejected_off_state: 2, rejected_arguments: 1, rejected_other: 0, by_state: {} })).toBe('7 tool calls by the model, 3 moves; refused: 2 not offered by the state, 1 with arguments that did not fit');
  });
});
