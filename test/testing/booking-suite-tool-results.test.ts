// The appointment-booking example's own suite, run scripted (no model, no network): each step
// says what the practice's service answers (`tool_results`), and that answer goes through the
// engine's http tool path — the runtime stores its fields, lets its next_state choose among the
// on_tool_result states, the model is told — so every branch of the availability check, and its
// failure, is reached and counted.
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests, type FlowTest } from '../../server/flow/tests-format.ts';
import type { ServerEvent, ServerEventOf } from '../../server/protocol/events.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { TestSession } from '../../server/testing/test-session.ts';
import { scriptedModel } from '../fakes/scripted-providers.ts';

const read = (name: string) => readFileSync(new URL(`../../resources/flows/${name}`, import.meta.url), 'utf8');
const BOOKING = parseFlow(read('appointment-booking.yaml')).document!;
const SUITE = parseFlowTests(read('appointment-booking.tests.yaml'), BOOKING);
const show = (t: { from: string; tool: string; to: string }) => `${t.from}.${t.tool}→${t.to}`;

function oneTest(yaml: string): FlowTest[] {
  const parsed = parseFlowTests(yaml, BOOKING);
  expect(parsed.diagnostics).toEqual([]);
  return parsed.tests!;
}

const failuresOf = (result: Awaited<ReturnType<typeof runTests>>) =>
  result.tests.flatMap((t) => t.runs.flatMap((run) => [...(run.error ? [`${t.name}: ${run.error}`] : []), ...run.steps.filter((s) => !s.passed).map((s) => `${t.name} #${s.index}: ${s.checks.filter((c) => !c.passed).map((c) => c.message).join('; ')}`)]));

describe('the booking suite, scripted, with the service answers its steps give', () => {
  it('is valid against the flow and passes, covering every state, transition and tool', async () => {
    expect(SUITE.diagnostics).toEqual([]);
    const result = await runTests(BOOKING, SUITE.tests!, { mode: 'scripted', providers: {} });
    expect(failuresOf(result)).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.coverage.states.uncovered).toEqual([]);
    expect(result.coverage.transitions.uncovered.map(show)).toEqual([]);
    expect(result.coverage.transitions.covered.map(show)).toEqual([
      'welcome.check_availability→welcome',
      'welcome.check_availability→offer_slot',
      'welcome.check_availability→ask_day',
      'ask_day.check_availability→ask_day',
      'ask_day.check_availability→offer_slot',
      'offer_slot.confirm_booking→booked',
      'offer_slot.another_day→ask_day',
    ]);
    expect(result.coverage.tools.uncovered).toEqual([]);
  });

  it('takes each branch the answer chooses, and the failure path, as its own path of states', async () => {
    const result = await runTests(BOOKING, SUITE.tests!, { mode: 'scripted', providers: {} });
    // A step's http call is reported with its answer and the state the answer chose.
    expect(result.tests[0]!.runs[0]!.steps[1]!.tool_calls).toEqual([
      { name: 'check_availability', arguments: { day: 'monday' }, status: 'accepted', reason: null, source: 'model', from_state: 'welcome', to_state: 'offer_slot', answer: { ok: true, http_status: 200, error: null } },
    ]);
    expect(result.tests[2]!.runs[0]!.steps[0]!.tool_calls[0]).toMatchObject({ to_state: 'welcome', answer: { ok: false, http_status: 503 } });
    expect(result.tests.map((t) => t.runs[0]!.path)).toEqual([
      ['welcome', 'offer_slot', 'booked'],
      ['welcome', 'ask_day', 'offer_slot', 'ask_day'],
      ['welcome', 'human_handoff'],
    ]);
  });
});

describe('a step\'s tool_results in a run', () => {
  it('gives the model the answer: a failed status is an error result, and the session stays', async () => {
    const tests = oneTest(`
name: down
steps:
  - user: Friday
    tool_results:
      check_availability: {status: 503, body: {error: maintenance}}
    expect: {tool_called: {name: check_availability, arguments: {day: friday}}, state: welcome}
`);
    const events = await eventsOf(tests[0]!);
    const answer = events.find((e): e is ServerEventOf<'tool_result'> => e.type === 'tool_result')!;
    expect(answer).toMatchObject({ name: 'check_availability', ok: false, http_status: 503, result: null, from_state: 'welcome', to_state: 'welcome' });
    expect(answer.error).toContain('answered 503: {"error":"maintenance"}');
  });

  it('times out with the tool\'s own time limit, and the call goes on in the same state', async () => {
    const tests = oneTest(`
name: slow
steps:
  - user: Friday
    tool_results:
      check_availability: {timeout: true}
    reply: Sorry, the calendar is slow today.
    expect: {tool_called: {name: check_availability, arguments: {day: friday}}, state: welcome, says: "calendar is slow"}
`);
    const result = await runTests(BOOKING, tests, { mode: 'scripted', providers: {} });
    expect(failuresOf(result)).toEqual([]);
    const answer = (await eventsOf(tests[0]!)).find((e): e is ServerEventOf<'tool_result'> => e.type === 'tool_result')!;
    expect(answer).toMatchObject({ ok: false, http_status: null, duration_ms: 3000, error: expect.stringContaining('no answer within 3000 ms') });
  });

  it('cannot move the session to a state the flow does not list for the tool, whatever the answer names', async () => {
    const text = `
name: answer names a state the flow does not allow
steps:
  - user: Monday
    tool_results:
      check_availability: {body: {next_state: booked, slot: "9:30"}}
    expect: {tool_called: {name: check_availability, arguments: {day: monday}}, state: booked}
`;
    const parsed = parseFlowTests(text, BOOKING);
    // Said when the test is written, as a warning (the flow may change), and held at run time.
    expect(parsed.diagnostics.map((d) => `${d.severity} ${d.code} ${d.line}:${d.column}`)).toEqual(['warning unknown_state 6:47']);
    expect(parsed.diagnostics[0]!.message).toContain('it may choose: offer_slot, ask_day');
    const result = await runTests(BOOKING, parsed.tests!, { mode: 'scripted', providers: {} });
    const step = result.tests[0]!.runs[0]!.steps[0]!;
    expect(step.passed).toBe(false);
    expect(step.state).toBe('welcome');
    expect(step.checks.find((c) => c.check === 'state')).toMatchObject({ expected: 'booked', actual: 'welcome' });
  });

  it('answers a call of a step that gives no answer with an error saying how to give one; an answer serves its own step only', async () => {
    const tests = oneTest(`
name: the answer of one step is not the next one's
steps:
  - user: Monday
    tool_results:
      check_availability: {body: {next_state: ask_day}}
    expect: {tool_called: {name: check_availability, arguments: {day: monday}}, state: ask_day}
  - user: Tuesday
    expect: {tool_called: {name: check_availability, arguments: {day: tuesday}}, state: ask_day}
`);
    const events = await eventsOf(tests[0]!);
    const answers = events.filter((e): e is ServerEventOf<'tool_result'> => e.type === 'tool_result');
    expect(answers.map((a) => a.ok)).toEqual([true, false]);
    expect(answers[1]!.error).toContain('the test gives no answer for check_availability in this step');
    expect(answers[1]!.error).toContain('tool_results');
  });
});

describe('tool_results in model mode', () => {
  it('hands the model the test\'s answer as the tool result, and the answer chooses the state', async () => {
    const tests = oneTest(`
name: the model checks monday
steps:
  - user: Monday please
    tool_results:
      check_availability: {body: {next_state: offer_slot, slot: "9:30"}}
    expect:
      tool_called: {name: check_availability, arguments: {day: monday}}
      state: offer_slot
      variables: {slot: "9:30"}
`);
    // The greeting (after the disclaimer), the call, then the words after its result.
    const model = scriptedModel([{ text: 'Which day?' }, { toolCalls: [{ name: 'check_availability', arguments: { day: 'monday' } }] }, { text: 'Monday at 9:30 is free.' }]);
    const result = await runTests(BOOKING, tests, { mode: 'model', providers: { llm: model } });
    expect(failuresOf(result)).toEqual([]);
    const toolMessages = model.requests.flatMap((r) => r.messages).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolMessages.some((m) => m.includes('"slot":"9:30"') && m.includes('"state":"offer_slot"'))).toBe(true);
  });
});

/** The events a client would see over the whole run of one scripted test (read as the runner ends its session). */
async function eventsOf(test: FlowTest): Promise<ServerEvent[]> {
  const seen: ServerEvent[] = [];
  const end = TestSession.prototype.end;
  const spy = vi.spyOn(TestSession.prototype, 'end').mockImplementation(function (this: TestSession) {
    seen.push(...this.events.map((e) => e.event));
    return end.call(this);
  });
  try {
    await runTests(BOOKING, [test], { mode: 'scripted', providers: {} });
  } finally {
    spy.mockRestore();
  }
  return seen;
}
