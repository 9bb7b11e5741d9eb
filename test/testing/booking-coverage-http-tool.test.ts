// The appointment-booking example run by the flow-test runner (scripted, no model): its
// availability check is an http tool whose answer chooses the next state (on_tool_result).
// Coverage counts each state the answer may choose as its own transition, and what a run took
// comes from the tool_result event, not from the call (which stays until the answer is in).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { runTests } from '../../server/testing/run-tests.ts';

const BOOKING = parseFlow(readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8')).document!;
const show = (t: { from: string; tool: string; to: string }) => `${t.from}.${t.tool}→${t.to}`;

describe('coverage of the booking flow in a test run', () => {
  it('a check whose answer never came counts as the stay it was; both result branches stay uncovered', async () => {
    const parsed = parseFlowTests(
      `
name: asks for monday
steps:
  - user: Monday please
    reply: Let me see.
    expect:
      tool_called: {name: check_availability, arguments: {day: monday}}
      state: welcome
`,
      BOOKING,
    );
    expect(parsed.diagnostics).toEqual([]);
    const result = await runTests(BOOKING, parsed.tests!, { mode: 'scripted', providers: {} });
    const run = result.tests[0]!.runs[0]!;
    expect(run.steps.flatMap((s) => s.checks.filter((c) => !c.passed).map((c) => c.message))).toEqual([]);
    // Tests never call the service, and this step gives no answer (tool_results): the http tool
    // fails, and the session stays in welcome.
    expect(run.exercised.transitions.map(show)).toEqual(['welcome.check_availability→welcome']);
    expect(result.coverage.transitions.covered.map(show)).toEqual(['welcome.check_availability→welcome']);
    expect(result.coverage.transitions.uncovered.map(show)).toEqual(
      expect.arrayContaining(['welcome.check_availability→offer_slot', 'welcome.check_availability→ask_day']),
    );
    expect(result.coverage.transitions.covered.length + result.coverage.transitions.uncovered.length).toBe(7);
  });
});
