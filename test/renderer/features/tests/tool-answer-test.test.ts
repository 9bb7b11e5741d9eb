// "Save as test" on an http tool's test request: the answer becomes the tool's `tool_results` in a
// test that first walks, by hand, to the tool's state (answering http tools on the way so they
// move there), and that test, run scripted with no service, passes and ends where the answer led.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseFlow } from '../../../../server/flow/parse.ts';
import { parseFlowTests } from '../../../../server/flow/tests-format.ts';
import { runTests } from '../../../../server/testing/run-tests.ts';
import { findState, type FlowData } from '../../../../server/flow/graph/flow-data.ts';
import { answerOfRequest, pathTo, toolAnswerTest } from '../../../../renderer/src/features/tests/tool-answer-test.ts';

const BOOKING_YAML = readFileSync(new URL('../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
const BOOKING = parseFlow(BOOKING_YAML).document!;
const DATA = parseYaml(BOOKING_YAML) as FlowData;
const checkAvailability = (state: string) => findState(DATA, state)!.tools.find((t) => t.name === 'check_availability')!;

async function run(yaml: string) {
  const parsed = parseFlowTests(yaml, BOOKING);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const result = await runTests(BOOKING, parsed.tests!, { mode: 'scripted', providers: {} });
  return result.tests[0]!.runs[0]!;
}

describe("an http tool's test request saved as a test", () => {
  it('in the start state: one step, the call given the answer, expecting the state the answer chose', async () => {
    const yaml = toolAnswerTest({
      name: 'Monday is free',
      data: DATA,
      state: 'welcome',
      tool: checkAvailability('welcome'),
      arguments: { day: 'monday' },
      tried: { ok: true, status: 200, body: { available: true, slot: '9:30', next_state: 'offer_slot' } },
    })!;
    expect(parseYaml(yaml)).toEqual({
      name: 'Monday is free',
      steps: [
        {
          simulate: { tool: 'check_availability', arguments: { day: 'monday' } },
          tool_results: { check_availability: { body: { available: true, slot: '9:30', next_state: 'offer_slot' } } },
          expect: { state: 'offer_slot' },
        },
      ],
    });
    const result = await run(yaml);
    expect(result.steps.map((s) => [s.passed, s.state])).toEqual([[true, 'offer_slot']]);
  });

  it('in a later state: walks there first, answering the http tool on the way so it moves there', async () => {
    expect(pathTo(DATA, 'ask_day')).toEqual([
      { simulate: { tool: 'check_availability', arguments: { day: 'monday' } }, tool_results: { check_availability: { body: { next_state: 'ask_day' } } } },
    ]);
    const yaml = toolAnswerTest({
      name: 'Tuesday fails',
      data: DATA,
      state: 'ask_day',
      tool: checkAvailability('ask_day'),
      arguments: { day: 'tuesday' },
      tried: { ok: false, status: 503, error: 'the service answered 503' },
    })!;
    const steps = parseYaml(yaml).steps;
    expect(steps).toHaveLength(2);
    // A failed call stays where it was.
    expect(steps[1]).toEqual({ simulate: { tool: 'check_availability', arguments: { day: 'tuesday' } }, tool_results: { check_availability: { status: 503 } }, expect: { state: 'ask_day' } });
    const result = await run(yaml);
    expect(result.steps.map((s) => [s.passed, s.state])).toEqual([
      [true, 'ask_day'],
      [true, 'ask_day'],
    ]);
  });

  it('a timeout is given as one; an answer a test cannot give (no status, or a 2xx that was not JSON) is none', () => {
    expect(answerOfRequest({ ok: false, status: null, error: 'no answer within 3000 ms' })).toEqual({ timeout: true });
    expect(answerOfRequest({ ok: false, status: null, error: 'connection refused' })).toBeNull();
    expect(answerOfRequest({ ok: false, status: 200, error: 'the answer is not JSON' })).toBeNull();
    expect(answerOfRequest({ ok: true, status: 201, body: { id: 1 } })).toEqual({ status: 201, body: { id: 1 } });
  });

  it('says when no calls reach the state, so the designer adds the way there', () => {
    const data = { ...DATA, initial_state: 'booked' } as FlowData;
    const yaml = toolAnswerTest({ name: 'x', data, state: 'welcome', tool: checkAvailability('welcome'), arguments: { day: 'monday' }, tried: { ok: true, status: 200, body: {} } })!;
    expect(yaml).toMatch(/^# .*No way by tool calls reaches welcome from the start/);
    expect(parseYaml(yaml).steps).toHaveLength(1);
  });
});
