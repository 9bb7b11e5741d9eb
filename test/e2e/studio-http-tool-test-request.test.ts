// "Send a test request" on an http tool's card: the designer's edit (a new time limit) is saved
// first, the account's service gets the request a call would send, and the card shows the method,
// the status, the time and the answer; a service that refuses is shown as refused. The answer is
// saved as a flow test ("Save as test") that gives it to the tool, and that test passes.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAvailabilityService, type AvailabilityService } from '../support/availability-service.ts';
import { WAIT, node, openFlow, showCards } from './studio-editor-page.ts';
import { startScreensServer } from './studio-screens-server.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

const BOOKING = readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');

describe("an http tool's test request", () => {
  let rig: StudioRig;
  let service: AvailabilityService;
  beforeAll(async () => {
    service = await startAvailabilityService({ monday: { status: 200, json: { available: true, slot: '9:30', next_state: 'offer_slot' } } });
    // The service listens on loopback: private networks allowed, as in the desktop app.
    rig = await startStudioRig({ server: await startScreensServer({ webhooks: { allowPrivate: true } }) });
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
    await rig?.server.close();
    await service?.close();
  });

  it('saves the edit, sends the request as a call would, and shows the status, time and answer', { timeout: 90_000 }, async () => {
    await rig.server.request('PUT', '/v1/secrets/tool_signing_secret', { jwt: rig.account.jwt, body: { value: `whsec_${Buffer.alloc(32, 3).toString('base64')}` } });
    await rig.server.request('PUT', '/v1/secrets/clinic_api_token', { jwt: rig.account.jwt, body: { value: 'clinic-e2e-token' } });
    const { page, id } = await openFlow(rig, 'Booking', BOOKING.replace('https://clinic.example.com/voxflow/availability', service.url));
    await showCards(page);
    await node(page, 'welcome').locator('header').click();
    const tool = page.locator('.inspector li.tool[data-tool="check_availability"]');
    await tool.locator('.head').click();
    // A header's name and value are read whole in the inspector's width, not cut to a few letters.
    for (const [field, text] of [['Header name', 'Authorization'], ['Value of Authorization', 'Bearer {secret.clinic_api_token}']] as const) {
      const input = tool.getByRole('textbox', { name: field });
      expect(await input.inputValue()).toBe(text);
      expect(await input.evaluate((el) => el.scrollWidth <= el.clientWidth), `${field} fits its box`).toBe(true);
    }
    const limit = tool.getByRole('textbox', { name: 'Time limit (ms)' });
    await limit.fill('4000');

    const before = service.received.length;
    await tool.getByRole('button', { name: 'Send a test request' }).click();
    const answer = tool.getByRole('status', { name: 'Test request answer' });
    await answer.waitFor(WAIT);
    expect(await answer.locator('p').innerText()).toMatch(/^POST · HTTP 200 · \d+ ms$/);
    expect(await answer.locator('pre').innerText()).toContain('"slot": "9:30"');
    // The service got the call's request, with the first allowed day; the edit was saved first.
    expect(service.received.length).toBe(before + 1);
    expect(service.received.at(-1)!.json).toMatchObject({ tool: 'check_availability', arguments: { day: 'monday' } });
    expect(service.received.at(-1)!.headers.authorization).toBe('Bearer clinic-e2e-token');
    const draft = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
    expect(draft.body.yaml_content).toContain('timeout_ms: 4000');

    // A day the service does not know: refused, and shown so.
    service.answers.set('monday', { status: 404, json: { error: 'unknown day' } });
    await tool.getByRole('button', { name: 'Send a test request' }).click();
    await expect.poll(() => answer.locator('p').innerText(), WAIT).toMatch(/^POST · HTTP 404 · \d+ ms · /);
    expect(await answer.locator('pre').count()).toBe(0);
  });

  it('saves an answer as a flow test that gives it to the tool, and the test passes without calling the service', { timeout: 90_000 }, async () => {
    await rig.server.request('PUT', '/v1/secrets/tool_signing_secret', { jwt: rig.account.jwt, body: { value: `whsec_${Buffer.alloc(32, 3).toString('base64')}` } });
    await rig.server.request('PUT', '/v1/secrets/clinic_api_token', { jwt: rig.account.jwt, body: { value: 'clinic-e2e-token' } });
    service.answers.set('monday', { status: 200, json: { available: true, slot: '9:30', next_state: 'offer_slot' } });
    const { page, id } = await openFlow(rig, 'Booking saved as test', BOOKING.replace('https://clinic.example.com/voxflow/availability', service.url));
    await showCards(page);
    await node(page, 'welcome').locator('header').click();
    const tool = page.locator('.inspector li.tool[data-tool="check_availability"]');
    await tool.locator('.head').click();
    await tool.getByRole('button', { name: 'Send a test request' }).click();
    const answer = tool.getByRole('status', { name: 'Test request answer' });
    await answer.waitFor(WAIT);

    // It looks like a button, not like the text fields around it.
    const look = (locator: ReturnType<typeof answer.locator>) => locator.evaluate((el) => {
      const style = (globalThis as any).getComputedStyle(el);
      return { background: style.backgroundColor, border: style.borderTopColor };
    });
    const saveAsTest = answer.getByRole('button', { name: 'Save as test' });
    const field = await look(tool.getByRole('textbox', { name: 'Time limit (ms)' }));
    const button = await look(saveAsTest);
    expect(button.background).not.toBe(field.background);
    expect(button.border).not.toBe(field.border);
    await saveAsTest.click();
    const yaml = answer.getByRole('textbox', { name: 'Recorded test YAML' });
    await yaml.waitFor(WAIT);
    const text = await yaml.inputValue();
    expect(text).toContain('name: check_availability answers 200');
    expect(text).toMatch(/tool_results:\s+check_availability:\s+body:/);
    expect(text).toContain('next_state: offer_slot');
    await answer.getByRole('button', { name: 'Save test' }).click();
    await answer.getByText('Saved “check_availability answers 200” to the flow\'s tests.').waitFor(WAIT);

    // Stored with the flow, and run against the draft it passes, taking the branch the answer chose,
    // with no request to the service.
    const tests = await rig.server.request('GET', `/v1/flows/${id}/tests`, { apiKey: rig.account.apiKey });
    expect(tests.body.map((t: { name: string }) => t.name)).toEqual(['check_availability answers 200']);
    const before = service.received.length;
    const run = await rig.server.request('POST', `/v1/flows/${id}/tests/run`, { apiKey: rig.account.apiKey, body: { mode: 'scripted', draft: true } });
    expect(run.status, run.text).toBe(202);
    let result: any;
    await expect
      .poll(async () => {
        result = (await rig.server.request('GET', `/v1/flows/${id}/tests/runs/${run.body.id}`, { apiKey: rig.account.apiKey })).body;
        return result.status;
      }, { timeout: 30_000 })
      .not.toBe('running');
    expect(result.status, JSON.stringify(result.result?.tests?.[0]?.runs?.[0]?.steps?.at(-1)?.checks)).toBe('passed');
    expect(result.result.tests[0].runs[0].steps.at(-1).state).toBe('offer_slot');
    expect(service.received.length).toBe(before);
  });
});
