// A simulated caller written in the Tests tab (docs/testing.md#simulated-callers): the designer
// types a test with a persona, a goal and a judge for the booking example, runs it ten times with
// the configured model, and sees its pass rate, the adherence figure, and on the graph how many of
// the runs took each transition and where the failed ones ended. The fake OpenAI plays the agent,
// the caller and the judge (rules keyed on each one's system prompt); the judge fails two of the
// ten calls, so the rate is 80%, which the test needs.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { BOOKING_PATH, CALLER_TEST, rulesFailingJudgements } from '../support/booking-simulated-callers.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { WAIT, node, openFlow, showCards } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

const BOOKING = readFileSync(BOOKING_PATH, 'utf8');

let fake: FakeOpenAI;
let server: TestServer;
let rig: StudioRig;
beforeAll(async () => {
  fake = await startFakeOpenAI({ rules: rulesFailingJudgements(3, 7) });
  server = await startTestServer({ providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: fake.url } } }, { voice: true });
  rig = await startStudioRig({ server });
}, 90_000);
afterAll(async () => {
  await rig?.close();
  await fake?.close();
});

describe('a simulated caller in the Tests tab', () => {
  it('is written, run ten times with the model, and shows its pass rate, adherence and paths on the graph', { timeout: 180_000 }, async () => {
    const { page } = await openFlow(rig, 'Booking with a simulated caller', BOOKING);
    await page.getByRole('tab', { name: 'Tests' }).click();
    const panel = page.getByRole('region', { name: 'Flow tests' });

    await panel.getByRole('textbox', { name: 'Test YAML' }).fill(`${CALLER_TEST.trim()}\nruns: 10\nmin_pass_rate: 0.8\n`);
    // Linted as typed: a valid test has no problems listed.
    expect(await panel.getByRole('list', { name: 'Problems in the test' }).count()).toBe(0);
    await panel.getByRole('button', { name: 'Add test' }).click();
    const test = panel.getByRole('listitem').filter({ hasText: 'a patient who wants Tuesday gets booked' });
    await test.waitFor(WAIT);

    await panel.getByRole('combobox', { name: 'How the tests run' }).selectOption('model');
    await panel.getByRole('button', { name: 'Run all' }).click();
    await expect.poll(() => panel.getByRole('status').filter({ hasText: 'passed' }).textContent(), { timeout: 120_000 }).toBe('1 of 1 passed');

    // The pass rate: 8 of the 10 calls the judge passed, and the test needs 80%.
    const rate = test.locator('.rate');
    expect(await rate.textContent()).toBe('80% of 10');
    expect(await rate.getAttribute('title')).toBe("8 of 10 runs passed; it needs 80%");
    // The adherence figure over the ten calls: the model's two tool calls each time, both moves, none refused.
    expect(await test.getByLabel('Adherence of a patient who wants Tuesday gets booked').textContent()).toBe('Adherence: 20 tool calls by the model, 20 moves; none refused');

    // The paths, painted on the graph: every run took both transitions, and the two the judge
    // failed ended in booked.
    await showCards(page);
    const painted = await page.locator('.svelte-flow__edge-label .tool').evaluateAll((buttons) => buttons
      .filter((b) => b.querySelector('.simulated'))
      .map((b) => `${(b as unknown as { title: string }).title} ${b.querySelector('.simulated')!.textContent}`));
    expect(painted.sort()).toEqual(['check_availability: its answer may lead from welcome to offer_slot 10/10', 'confirm_booking: offer_slot → booked 10/10']);
    expect(await node(page, 'booked').locator('.pill.stuck').textContent()).toBe('stuck 2/10');
    expect(await page.locator('.pill.stuck').count()).toBe(1);
    await page.close();
  });
});
