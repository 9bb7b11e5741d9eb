// A step's within_ms: the agent's first words after the caller's turn must come within the budget.
// A model (the fake OpenAI through the real SDK) that takes 1.5 s to start answering misses a
// 300 ms budget, and the step fails with the figure; a budget it keeps passes.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { prettyReport } from '../../server/testing/reporters.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';

const BOOKING = parseFlow(readFileSync(fileURLToPath(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url)), 'utf8')).document!;
const SLOW_MS = 1_500;

const testWithBudget = (budgetMs: number) =>
  parseFlowTests(`
name: the agent answers Tuesday in time
steps:
  - user: "Tuesday, please"
    within_ms: ${budgetMs}
    tool_results:
      check_availability: {body: {next_state: offer_slot, slot: "10:00"}}
    expect: {state: offer_slot}
`).tests!;

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({
    rules: [
      { when: { lastRole: 'tool' }, respond: { text: 'Tuesday at 10:00 is free.' } },
      { when: { lastUserText: /tuesday/i }, respond: { toolCalls: [{ name: 'check_availability', arguments: { day: 'tuesday' } }], firstChunkDelayMs: SLOW_MS } },
      { respond: { text: 'Which day?' } },
    ],
  });
});
afterAll(() => fake.close());

describe('a step with within_ms', () => {
  it('fails with the figure when the agent takes longer, and passes a budget it keeps', async () => {
    const llm = createOpenAILanguageModel({ baseUrl: fake.url, timeoutMs: 20_000 });
    const missed = await runTests(BOOKING, testWithBudget(300), { mode: 'model', providers: { llm } });
    const step = missed.tests[0]!.runs[0]!.steps[0]!;
    expect(step.passed).toBe(false);
    const budget = step.checks.find((c) => c.check === 'within_ms')!;
    expect(budget.expected).toBe(300);
    expect(budget.actual).toBeGreaterThanOrEqual(SLOW_MS);
    expect(budget.message).toBe(`the agent took ${String(budget.actual)} ms from the caller's turn to its first words, over its budget of 300 ms`);
    // The other checks held: only the budget failed the step.
    expect(step.checks.filter((c) => c.check !== 'within_ms').every((c) => c.passed)).toBe(true);
    expect(prettyReport(missed, 'booking')).toContain('over its budget of 300 ms');

    const kept = await runTests(BOOKING, testWithBudget(60_000), { mode: 'model', providers: { llm } });
    expect(kept.tests[0]!.runs[0]!.steps[0]!.checks.find((c) => c.check === 'within_ms')).toMatchObject({ passed: true, expected: 60_000 });
    expect(kept.passed).toBe(true);
  });
});
