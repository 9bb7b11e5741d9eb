// Record → replay with http tools: a booking call as GET /v1/sessions/{id} returns it, its
// availability checks answered by the practice's service, becomes a test whose steps give those
// answers (`tool_results`), and that test, replayed scripted with no service, takes the same
// branches and passes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../server/flow/parse.ts';
import { parseFlowTests } from '../../../../server/flow/tests-format.ts';
import { runTests } from '../../../../server/testing/run-tests.ts';
import { recordedTest, type RecordedConversation } from '../../../../renderer/src/features/tests/record-test.ts';

const BOOKING = parseFlow(readFileSync(new URL('../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8')).document!;

const answer = (name: string, ok: boolean, http_status: number | null, result: unknown, error: string | null, from: string, to: string, at: number, source: 'model' | 'simulator' = 'model') =>
  ({ name, arguments: {}, ok, http_status, result, error, from_state: from, to_state: to, source, at });
const call = (name: string, args: Record<string, unknown>, from: string, at: number, source: 'model' | 'simulator' = 'model') =>
  ({ name, arguments: args, status: 'accepted' as const, reason: null, from_state: from, to_state: from, source, at });

// Monday is full, Tuesday's check times out, Wednesday's fails with 503; the designer then
// simulates a check by hand, which finds a slot on Friday, and the caller books it.
const SESSION: RecordedConversation = {
  path: [
    { state: 'welcome', at: 100 },
    { state: 'ask_day', at: 103.5 },
    { state: 'offer_slot', at: 118.4 },
    { state: 'booked', at: 121.3 },
  ],
  transcript: [
    { role: 'user', text: 'Monday please', at: 103 },
    { role: 'user', text: 'Tuesday?', at: 106 },
    { role: 'user', text: 'Wednesday then', at: 112 },
    { role: 'user', text: 'Yes, book it', at: 121 },
  ],
  tool_calls: [
    call('check_availability', { day: 'monday' }, 'welcome', 103.2),
    call('check_availability', { day: 'tuesday' }, 'ask_day', 106.2),
    call('check_availability', { day: 'wednesday' }, 'ask_day', 112.2),
    call('check_availability', { day: 'friday' }, 'ask_day', 118, 'simulator'),
    { ...call('confirm_booking', {}, 'offer_slot', 121.3), to_state: 'booked' },
  ],
  tool_results: [
    answer('check_availability', true, 200, { available: false, next_state: 'ask_day' }, null, 'welcome', 'ask_day', 103.5),
    answer('check_availability', false, null, null, 'the check_availability service failed: no answer within 3000 ms', 'ask_day', 'ask_day', 109.2),
    answer('check_availability', false, 503, null, 'the check_availability service failed: answered 503', 'ask_day', 'ask_day', 112.4),
    answer('check_availability', true, 200, { slot: '15:00', next_state: 'offer_slot' }, null, 'ask_day', 'offer_slot', 118.4, 'simulator'),
  ],
};

describe('save as test, with http tools', () => {
  it('gives each step the answers its calls got, and a simulated call the state its answer chose', () => {
    const parsed = parseFlowTests(recordedTest('booking recorded', SESSION), BOOKING);
    expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const steps = parsed.tests![0]!.steps!;
    expect(steps.map((s) => s.tool_results)).toEqual([
      { check_availability: { body: { available: false, next_state: 'ask_day' } } },
      { check_availability: { timeout: true } },
      { check_availability: { status: 503 } },
      { check_availability: { body: { slot: '15:00', next_state: 'offer_slot' } } },
      undefined,
    ]);
    expect(steps.map((s) => s.simulate?.tool ?? s.user)).toEqual(['Monday please', 'Tuesday?', 'Wednesday then', 'check_availability', 'Yes, book it']);
    expect(steps.map((s) => s.expect?.state)).toEqual(['ask_day', 'ask_day', 'ask_day', 'offer_slot', 'booked']);
  });

  it('replays: the recorded test passes scripted, with no service, through the same branches', async () => {
    const tests = parseFlowTests(recordedTest('replayed', SESSION), BOOKING).tests!;
    const result = await runTests(BOOKING, tests, { mode: 'scripted', providers: {} });
    const run = result.tests[0]!.runs[0]!;
    expect(run.steps.map((s) => [s.action, s.passed, s.checks.filter((c) => !c.passed).map((c) => c.message)])).toEqual([
      ['user: Monday please', true, []],
      ['user: Tuesday?', true, []],
      ['user: Wednesday then', true, []],
      ['simulate: check_availability', true, []],
      ['user: Yes, book it', true, []],
    ]);
    expect(run.path).toEqual(['welcome', 'ask_day', 'offer_slot', 'booked']);
  });
});
