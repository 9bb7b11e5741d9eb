// The format of a test with a simulated caller: the caller's keys are checked as strictly as a
// step's, each problem at its line and column, and a test is either scripted or simulated.
import { describe, expect, it } from 'vitest';
import { parseFlowTests } from '../../server/flow/tests-format.ts';

const problems = (text: string) => parseFlowTests(text).diagnostics.map(({ code, message, line, column, severity }) => ({ code, message, line, column, severity }));

describe('a test with a simulated caller', () => {
  it('parses with its caller, judge, call-wide answers and checks, runs and pass rate', () => {
    const parsed = parseFlowTests(`name: books Tuesday
caller: {persona: "a patient", goal: "book Tuesday", max_turns: 8}
caller_llm: gpt-4o
judge: {criteria: ["booked on a Tuesday"], model: gpt-4o}
tool_results:
  check_availability: {body: {next_state: offer_slot, slot: "10:00"}}
expect: {state: booked}
runs: 5
min_pass_rate: 0.8
`);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.tests![0]).toMatchObject({ caller: { persona: 'a patient', goal: 'book Tuesday', max_turns: 8 }, caller_llm: 'gpt-4o', judge: { criteria: ['booked on a Tuesday'], model: 'gpt-4o' }, runs: 5, min_pass_rate: 0.8 });
  });

  it('names an unknown key in the caller, the judge or the test at its line and column, with the keys allowed', () => {
    expect(problems(`name: t
caller:
  persona: a patient
  goal: book
  patience: 3
judge:
  criteria: [booked]
  strictness: high
runs: 2
retries: 1
`)).toEqual([
      { code: 'unknown_key', severity: 'error', line: 5, column: 3, message: 'caller has an unknown key "patience"; allowed keys: persona, goal, max_turns' },
      { code: 'unknown_key', severity: 'error', line: 8, column: 3, message: 'judge has an unknown key "strictness"; allowed keys: criteria, model' },
      { code: 'unknown_key', severity: 'error', line: 10, column: 1, message: 'the document has an unknown key "retries"; allowed keys: name, description, context, steps, caller, caller_llm, judge, tool_results, expect, runs, min_pass_rate' },
    ]);
  });

  it('is scripted or simulated, never both nor neither; call-wide keys go with a caller', () => {
    expect(problems(`name: both
caller: {persona: p, goal: g}
steps:
  - user: hi
`).map((p) => [p.code, p.line, p.column])).toEqual([['caller_or_steps', 2, 1]]);
    expect(problems('name: neither\n').map((p) => [p.code, p.message])).toEqual([['missing_key', 'the test needs the key "steps" (a scripted test) or "caller" (a simulated caller)']]);
    expect(problems(`name: scripted
judge: {criteria: [ok]}
steps:
  - user: hi
`).map((p) => [p.code, p.message, p.line])).toEqual([['caller_or_steps', 'the test has "judge" beside steps: judge goes with a simulated caller (caller)', 2]]);
  });

  it('refuses a max_turns, runs or within_ms out of range, and a budget with nothing to answer', () => {
    expect(problems(`name: t
caller: {persona: p, goal: g, max_turns: 0}
runs: 100
`).map((p) => [p.code, p.line])).toEqual([['wrong_type', 2], ['wrong_type', 3]]);
    expect(problems(`name: t
steps:
  - expect: {state: a}
    within_ms: 500
`).map((p) => [p.code, p.message])).toEqual([['nothing_to_check', 'steps[0] has within_ms but nothing for the agent to answer: add user, simulate or dtmf']]);
  });
});
