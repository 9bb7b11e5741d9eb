// A flow test has no phone line: a state that hands the caller on (cold, or warm with a summary)
// is taken as handed on — the person answers at once — so a step that presses the key for the
// front desk can expect `transferred_to`, and the session ends `transferred`. The documented
// example in docs/phone-flows.md, run as the CLI runs it.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { FRONT_DESK, PHONE_MENU_YAML } from '../support/phone-menu-flow.ts';

const STEP = ['name: the front desk', 'steps:', '  - dtmf: "0"', `    expect: { state: human, transferred_to: "${FRONT_DESK}", ended: true }`, ''].join('\n');

describe.each([
  ['cold', PHONE_MENU_YAML],
  ['warm', PHONE_MENU_YAML.replace('mode: cold, on_failed: menu', 'mode: warm, summary: true, on_failed: menu')],
])('a flow test of a %s transfer', (mode, yaml) => {
  it('passes transferred_to and ends the session, with the transfer on its events', async () => {
    const flow = parseFlow(yaml).document!;
    expect(flow.states.human?.on_enter?.transfer?.mode).toBe(mode);
    const suite = parseFlowTests(STEP, flow);
    expect(suite.diagnostics).toEqual([]);
    const result = await runTests(flow, suite.tests!, { mode: 'scripted', providers: {} });
    const step = result.tests[0]!.runs[0]!.steps[0]!;
    expect(step.checks.filter((c) => !c.passed).map((c) => c.message)).toEqual([]);
    expect(step.checks.find((c) => c.check === 'transferred_to')!.actual).toEqual([
      { to: FRONT_DESK, mode, status: 'started' },
      { to: FRONT_DESK, mode, status: 'completed' },
    ]);
    expect(result.passed).toBe(true);
  });
});
