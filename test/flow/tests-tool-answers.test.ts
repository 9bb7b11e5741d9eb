// A flow test's answers to http tools (`tool_results`) are checked like the rest of the test
// format: every problem at once, each at its line and column, errors for what cannot mean
// anything and warnings for an answer the step or the flow would never use.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';

const BOOKING = parseFlow(readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8')).document!;
const found = (text: string) => parseFlowTests(text, BOOKING).diagnostics.map((d) => `${d.severity} ${d.code} ${d.line}:${d.column}`);

describe('tool_results in a flow test', () => {
  it('reads an answer with a status and a body, a failure, and a timeout', () => {
    const result = parseFlowTests(
      [
        'name: answers',
        'steps:',
        '  - user: Monday',
        '    tool_results:',
        '      check_availability: {body: {next_state: offer_slot, slot: "9:30"}}',
        '  - user: Tuesday',
        '    tool_results: {check_availability: {status: 503}}',
        '  - user: Friday',
        '    tool_results: {check_availability: {timeout: true}}',
        '',
      ].join('\n'),
      BOOKING,
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.tests![0]!.steps!.map((s) => s.tool_results)).toEqual([
      { check_availability: { body: { next_state: 'offer_slot', slot: '9:30' } } },
      { check_availability: { status: 503 } },
      { check_availability: { timeout: true } },
    ]);
  });

  it('refuses an answer that both times out and answers, a mistyped status and an unknown key, saying the allowed keys', () => {
    const text = [
      'name: bad answers',
      'steps:',
      '  - user: Monday',
      '    tool_results:',
      '      check_availability: {timeout: true, status: 200}',
      '  - user: Tuesday',
      '    tool_results:',
      '      check_availability: {status: "ok", bodyy: {}}',
      '',
    ].join('\n');
    const result = parseFlowTests(text, BOOKING);
    expect(result.tests).toBeNull();
    expect(found(text)).toEqual(['error conflicting_answer 5:28', 'error wrong_type 8:36', 'error unknown_key 8:42']);
    expect(result.diagnostics.find((d) => d.code === 'unknown_key')!.message).toContain('allowed keys: status, body, timeout');
  });

  it('warns of answers nothing uses: in a step that does not act, for a tool without http, for a tool no state lists', () => {
    const text = [
      'name: unused answers',
      'steps:',
      '  - tool_results: {check_availability: {body: {}}}',
      '    expect: {state: welcome}',
      '  - user: yes',
      '    tool_results:',
      '      confirm_booking: {body: {}}',
      '      check_avail: {body: {}}',
      '',
    ].join('\n');
    const result = parseFlowTests(text, BOOKING);
    expect(result.tests).not.toBeNull();
    expect(found(text)).toEqual(['warning unused_answer 3:5', 'warning unused_answer 7:7', 'warning unknown_tool 8:7']);
    const messages = result.diagnostics.map((d) => d.message);
    expect(messages[0]).toContain('neither speaks (user) nor simulates a tool');
    expect(messages[1]).toContain('confirm_booking does not call a service');
  });

  it('knows a global tool is offered in every state: simulating it is no unknown tool', () => {
    expect(found('name: human\nsteps:\n  - simulate: {tool: talk_to_human}\n    expect: {state: human_handoff}\n')).toEqual([]);
  });
});
