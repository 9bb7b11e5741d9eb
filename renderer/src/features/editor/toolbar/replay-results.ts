// What the History panel's "Replay recorded calls" shows of a replay run
// (docs/testing.md#replaying-recorded-sessions), as a plain function of the API's answer: per
// recorded session, whether the draft's path left the recorded one and where, the recorded state
// against the draft's. Unit-tested without a browser.
import type { TestResultView } from '../../../lib/api-types.ts';

export interface ReplayOutcome {
  /** The recorded session the test replayed (its name is `replay of session <id>`). */
  sessionId: string | null;
  name: string;
  /** same: the draft went where the recording went; changed: it left it at `where`; failed: it could not be replayed. */
  kind: 'same' | 'changed' | 'failed';
  where?: { step: number; said: string; recorded: string; draft: string };
  /** Why a replay failed without a changed path (a model error, a check other than the state). */
  error?: string;
}

const SESSION_ID = /^replay of session (.+)$/;

export function replayOutcomes(tests: ReadonlyArray<Pick<TestResultView, 'name' | 'passed' | 'runs'>>): ReplayOutcome[] {
  return tests.map((test) => {
    const sessionId = SESSION_ID.exec(test.name)?.[1] ?? null;
    const base = { sessionId, name: test.name };
    if (test.passed) return { ...base, kind: 'same' };
    const run = test.runs[0];
    for (const step of run?.steps ?? []) {
      const state = step.checks.find((c) => c.check === 'state' && !c.passed);
      if (state) {
        return {
          ...base,
          kind: 'changed',
          where: { step: step.index + 1, said: step.action.replace(/^user: /, ''), recorded: String(state.expected), draft: String(state.actual ?? '(none)') },
        };
      }
    }
    const message = run?.error ?? run?.steps.flatMap((s) => s.checks.filter((c) => !c.passed)).map((c) => c.message)[0] ?? 'the replay failed';
    return { ...base, kind: 'failed', error: message };
  });
}
