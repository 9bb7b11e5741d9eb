// What within_ms measures. Spoken: from the end of the caller's turn, as the voice activity model
// heard it, to the agent's first audio, on the run's clock (not the model's first words, and not
// from when the caller began). Typed: from the turn sent to the agent's first words, in real time.
import { describe, expect, it } from 'vitest';
import { checkBudget, type TimedEvent } from '../../server/testing/checks.ts';

const at = (ms: number, wall: number, event: TimedEvent['event']): TimedEvent => ({ at: ms, wall, event });

describe('a latency budget', () => {
  it('spoken: counts from the end of the caller’s turn to the agent’s first audio', () => {
    const events = [
      at(1_000, 0, { type: 'user_started_speaking' }),
      at(2_400, 0, { type: 'user_stopped_speaking' }),
      at(2_900, 0, { type: 'transcript', role: 'agent', text: 'Let me check.', final: false }),
      at(3_350, 0, { type: 'agent_started_speaking' }),
    ];
    expect(checkBudget(800, events, 0, true)).toMatchObject({ passed: false, actual: 950, message: "the agent took 950 ms from the end of the caller's turn to its first audio, over its budget of 800 ms" });
    expect(checkBudget(1_000, events, 0, true)).toMatchObject({ passed: true, actual: 950 });
  });

  it('typed: counts real time from the turn sent to the first words; an agent that never answers fails', () => {
    const events = [at(0, 5_010, { type: 'transcript', role: 'user', text: 'hi', final: true }), at(0, 5_620, { type: 'transcript', role: 'agent', text: 'Hello', final: true })];
    expect(checkBudget(500, events, 5_000, false)).toMatchObject({ passed: false, actual: 620, message: "the agent took 620 ms from the caller's turn to its first words, over its budget of 500 ms" });
    expect(checkBudget(500, events.slice(0, 1), 5_000, false)).toMatchObject({ passed: false, actual: null, message: 'the agent never answered (budget 500 ms)' });
  });
});
