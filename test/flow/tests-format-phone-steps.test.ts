// Flow tests of a phone menu: steps press keys (`dtmf`), expect a transfer (`transferred_to`),
// and coverage counts the keypad's moves as transitions.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { flowCoverage, flowTransitions } from '../../server/flow/tests-coverage.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { PHONE_VALID } from './phone-diagnostic-cases.ts';

const CLINIC = parseFlow(PHONE_VALID).document!;

describe('a flow test that presses keys', () => {
  it('reads dtmf steps and a transferred_to expectation', () => {
    const text = ['name: to the desk', 'steps:', '  - dtmf: "0"', '    expect: { transferred_to: "+15551234567", state: human }', '  - dtmf: "1234#"', ''].join('\n');
    const result = parseFlowTests(text, CLINIC);
    expect(result.diagnostics).toEqual([]);
    expect(result.tests?.[0]?.steps).toEqual([{ dtmf: '0', expect: { transferred_to: '+15551234567', state: 'human' } }, { dtmf: '1234#' }]);
  });

  it('reports bad keys, a second action, a malformed target and an unknown one, each where it is', () => {
    const text = [
      'name: mistakes',
      'steps:',
      '  - dtmf: "12a"',
      '  - user: one',
      '    dtmf: "1"',
      '  - dtmf: 12',
      '  - dtmf: "0"',
      '    expect: { transferred_to: "555-1234" }',
      '  - dtmf: "0"',
      '    expect: { transferred_to: "+15559999999" }',
      '',
    ].join('\n');
    const result = parseFlowTests(text, CLINIC);
    expect(result.tests).toBeNull();
    expect(result.diagnostics.map((d) => `${d.severity} ${d.code} ${d.line}:${d.column}`)).toEqual([
      'error wrong_type 3:11',
      'error two_actions 5:5',
      'error wrong_type 6:11',
      'error invalid_transfer_target 8:31',
      'warning unknown_transfer_target 10:31',
    ]);
    expect(result.diagnostics[0]!.message).toBe('steps[0].dtmf: must be 1 to 32 of the keypad keys 0-9, * and #');
    expect(result.diagnostics[1]!.message).toContain('both speaks (user) and presses keys (dtmf)');
    expect(result.diagnostics[3]!.message).toContain('E.164');
    expect(result.diagnostics[4]!.message).toBe('no state of the flow transfers to +15559999999');
  });

  it('counts a step that only presses keys as one that acts', () => {
    const result = parseFlowTests('name: keys\nsteps:\n  - dtmf: "#"\n', CLINIC);
    expect(result.diagnostics).toEqual([]);
  });
});

describe('coverage of a phone menu', () => {
  it('has a transition per key and one for the collected number, apart from the tools', () => {
    expect(flowTransitions(CLINIC)).toEqual([
      // Digit keys in their order on the keypad (a map's number-like keys come first, ascending), then * and # as written.
      { from: 'menu', tool: 'key 0', to: 'human' },
      { from: 'menu', tool: 'key 1', to: 'book' },
      { from: 'menu', tool: 'key *', to: 'menu' },
      { from: 'menu', tool: 'key #', to: 'book' },
      { from: 'menu', tool: 'collect account_number', to: 'verify' },
      { from: 'verify', tool: 'press_for_operator', to: 'book' },
    ]);
    const coverage = flowCoverage(CLINIC, {
      states: ['menu', 'human'],
      transitions: [{ from: 'menu', tool: 'key 0', to: 'human' }],
    });
    expect(coverage.transitions.covered).toEqual([{ from: 'menu', tool: 'key 0', to: 'human' }]);
    expect(coverage.transitions.uncovered).toHaveLength(5);
    expect(coverage.tools).toEqual({ covered: [], uncovered: ['press_for_operator'], fraction: 0 });
  });
});
