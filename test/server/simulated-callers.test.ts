// Tests with a simulated caller: a model with a persona and a goal calls the booking example, the
// configured model plays its agent, and a judge decides each criterion with a reason. Both models
// are the fake OpenAI, reached through the real `openai` SDK, answering by rules keyed on each
// system prompt (the booking assistant's, the caller's persona, the judge's), so every run is the
// same conversation.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { junitReport, prettyReport } from '../../server/testing/reporters.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { BOOKING, CALLER_TEST, GOOD_JUDGE, PATIENT, RAMBLER, WEEKENDER, rules, rulesFailingJudgements } from '../support/booking-simulated-callers.ts';

function testsOf(yaml: string) {
  const parsed = parseFlowTests(yaml, BOOKING);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return parsed.tests!;
}

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
beforeEach(() => fake.setRules(rules(GOOD_JUDGE)));

const llm = () => createOpenAILanguageModel({ baseUrl: fake.url, timeoutMs: 20_000 });

describe('a simulated caller', () => {
  it('books Tuesday on the booking example, and the judge gives a reason per criterion', async () => {
    const result = await runTests(BOOKING, testsOf(CALLER_TEST), { mode: 'model', providers: { llm: llm() } });
    const test = result.tests[0]!;
    const run = test.runs[0]!;
    expect(run.error).toBeNull();
    expect(run.transcript.map((l) => `${l.role}: ${l.text}`)).toEqual([
      'agent: Welcome to Maple Street Dental. I am an automated assistant, and this call may be recorded for quality.',
      'agent: Which weekday would suit you?',
      'user: Do you have anything on Tuesday?',
      'agent: Let me check tuesday.',
      'agent: Tuesday at 10:00 is free. Shall I book it?',
      'user: Yes please, book it.',
      'agent: You are booked for tuesday at 10:00. We look forward to seeing you. Goodbye!',
    ]);
    expect(run.path).toEqual(['welcome', 'offer_slot', 'booked']);
    expect(run.caller).toEqual({ turns: 2, ended_by: 'flow', reason: expect.any(String) });
    expect(run.judgement!.criteria).toEqual([
      { criterion: 'The caller is booked on a Tuesday', passed: true, reason: 'The agent booked Tuesday at 10:00 and said so.' },
      { criterion: 'The agent never offers a time the service did not give', passed: true, reason: 'The only time offered, 10:00, came from the availability check.' },
    ]);
    expect(test.passed).toBe(true);
    expect(result.coverage.transitions.covered).toContainEqual({ from: 'welcome', tool: 'check_availability', to: 'offer_slot' });

    // The caller's model (caller_llm) was given its persona and goal, and the tool to hang up with.
    const callerRequest = fake.requests.find((r) => JSON.stringify(r.body).includes(PATIENT))!.body as { model: string; messages: Array<{ role: string; content: string }>; tools: Array<{ function: { name: string } }> };
    expect(callerRequest.model).toBe('gpt-caller');
    expect(callerRequest.messages[0]!.content).toContain('book a check-up on Tuesday');
    expect(callerRequest.tools.map((t) => t.function.name)).toEqual(['end_call']);
    // The judge read the call and was held to the schema, strictly.
    const judgeRequest = fake.requests.find((r) => JSON.stringify(r.body).includes('voxflow_judgement'))!.body as { model: string; messages: Array<{ content: string }>; response_format: { json_schema: { strict: boolean } } };
    expect(judgeRequest.response_format.json_schema.strict).toBe(true);
    expect(judgeRequest.model).toBe('gpt-judge');
    expect(run.judgement!.model).toBe('gpt-judge');
    expect(judgeRequest.messages[1]!.content).toContain('Caller: Yes please, book it.');
  });

  it('fails the run with the judge\'s reason when a criterion is not met, and the report shows it', async () => {
    fake.setRules(rules({ json: { verdicts: [
      { criterion: 'The caller is booked on a Tuesday', passed: true, reason: 'Booked for Tuesday.' },
      { criterion: 'The agent never offers a time the service did not give', passed: false, reason: 'The agent offered 10:00 before checking.' },
    ] } }));
    const result = await runTests(BOOKING, testsOf(CALLER_TEST), { mode: 'model', providers: { llm: llm() } });
    const run = result.tests[0]!.runs[0]!;
    expect(run.passed).toBe(false);
    expect(run.judgement!.criteria[1]).toEqual({ criterion: 'The agent never offers a time the service did not give', passed: false, reason: 'The agent offered 10:00 before checking.' });
    expect(prettyReport(result, 'booking')).toContain('not met: The agent never offers a time the service did not give — The agent offered 10:00 before checking.');
  });

  it('ends the call when the caller hangs up with end_call, with its reason', async () => {
    const tests = testsOf(`
name: a weekender
caller: {persona: "${WEEKENDER}", goal: "book a Saturday"}
expect: {state: welcome}
`);
    const result = await runTests(BOOKING, tests, { mode: 'model', providers: { llm: llm() } });
    const run = result.tests[0]!.runs[0]!;
    expect(run.caller).toEqual({ turns: 1, ended_by: 'caller', reason: 'gave up: no Saturday' });
    expect(run.transcript.filter((l) => l.role === 'user').map((l) => l.text)).toEqual(['Can I come on Saturday?']);
    expect(run.passed).toBe(true);
  });

  it('stops a caller that never hangs up at max_turns, failing the run with that reason', async () => {
    const tests = testsOf(`
name: a rambler
caller: {persona: "${RAMBLER}", goal: "chat", max_turns: 3}
`);
    const result = await runTests(BOOKING, tests, { mode: 'model', providers: { llm: llm() } });
    const run = result.tests[0]!.runs[0]!;
    expect(run.passed).toBe(false);
    expect(run.caller).toEqual({ turns: 3, ended_by: 'max_turns', reason: null });
    expect(run.transcript.filter((l) => l.role === 'user')).toHaveLength(3);
    expect(run.steps[0]!.checks[0]).toMatchObject({ check: 'max_turns', passed: false, message: 'the caller had not hung up after 3 turns (max_turns) and went on: "Oh, lovely weather today, is it not?"' });
  });

  it('makes every criterion unknown with the error when the judge answers garbage, and the run fails without a crash', async () => {
    for (const garbage of [{ text: 'It went fine, I think.' }, { json: { verdict: 'yes' } }, { refusal: "I can't help with that." }]) {
      fake.setRules(rules(garbage));
      const result = await runTests(BOOKING, testsOf(CALLER_TEST), { mode: 'model', providers: { llm: llm() } });
      const run = result.tests[0]!.runs[0]!;
      expect(run.error).toBeNull();
      expect(run.passed).toBe(false);
      // The plain checks still held: only the judge is unknown.
      expect(run.steps[0]!.checks.filter((c) => c.check !== 'judge').every((c) => c.passed)).toBe(true);
      expect(run.judgement!.criteria.map((c) => c.passed)).toEqual([null, null]);
      const error = run.judgement!.criteria[0]!.error!;
      if ('text' in garbage) expect(error).toBe('the judge\'s answer was not JSON: "It went fine, I think."');
      else if ('json' in garbage) expect(error).toMatch(/^the judge's answer did not fit the schema/);
      else expect(error).toContain("the model refused: I can't help with that.");
      expect(failureText(result)).toContain('unknown: The caller is booked on a Tuesday');
    }
  });

  it('runs: 5 gives a pass rate, and min_pass_rate decides', async () => {
    // The judge fails the second and fourth calls it is asked about.
    fake.setRules(rulesFailingJudgements(2, 4));
    const tests = testsOf(`${CALLER_TEST}runs: 5\nmin_pass_rate: 0.8\n`);
    const result = await runTests(BOOKING, tests, { mode: 'model', parallel: 2, providers: { llm: llm() } });
    const test = result.tests[0]!;
    expect(test.runs).toHaveLength(5);
    expect(test.pass_rate).toBe(0.6);
    expect(test.min_pass_rate).toBe(0.8);
    expect(test.passed).toBe(false);
    const report = prettyReport(result, 'booking');
    expect(report).toContain('✗ a patient who wants Tuesday gets booked (3/5 runs passed, 60%; needs 80%)');
    expect(report).toContain('not met: The caller is booked on a Tuesday — No booking was confirmed.');
    const junit = junitReport(result, 'booking');
    expect(junit).toContain('passed 60% of 5 runs (needs 80%)');
    expect(junit).toContain('<property name="pass_rate: a patient who wants Tuesday gets booked" value="0.6"/>');
  });

  it('is refused outside model mode, saying why', async () => {
    await expect(runTests(BOOKING, testsOf(CALLER_TEST), { mode: 'scripted', providers: {} })).rejects.toThrow('"a patient who wants Tuesday gets booked" has a simulated caller, which talks to the configured model: run it in model mode (--mode model)');
  });
});

function failureText(result: Awaited<ReturnType<typeof runTests>>): string {
  return prettyReport(result, 'booking');
}
