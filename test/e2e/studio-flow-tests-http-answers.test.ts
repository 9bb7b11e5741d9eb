// The Tests tab with a flow whose http tool's answer chooses the next state
// (docs/flows.md#extended-flow-keys, docs/testing.md#flow-tests): the booking example's own suite,
// whose steps give the service's answers (`tool_results`), runs from the tab and reaches every
// branch, so nothing is painted untested; a test whose answer cannot mean anything is flagged at
// its line while it is typed.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAIT, openFlow } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

const read = (name: string) => readFileSync(new URL(`../../resources/flows/${name}`, import.meta.url), 'utf8');
const BOOKING = read('appointment-booking.yaml');
const SUITE = read('appointment-booking.tests.yaml');

let rig: StudioRig;
beforeAll(async () => {
  rig = await startStudioRig();
}, 60_000);
afterAll(async () => {
  await rig?.close();
});

describe('the Tests tab with http tool answers', () => {
  it('runs the booking suite through every result branch, and lints an answer that times out and answers', { timeout: 90_000 }, async () => {
    const { page, id } = await openFlow(rig, 'Booking with tests', BOOKING);
    const imported = await rig.server.request('POST', `/v1/flows/${id}/tests/import`, { apiKey: rig.account.apiKey, body: { yaml_content: SUITE } });
    expect(imported.status).toBe(201);

    await page.getByRole('tab', { name: 'Tests' }).click();
    const panel = page.getByRole('region', { name: 'Flow tests' });
    await panel.getByRole('listitem').filter({ hasText: 'the service is down' }).waitFor(WAIT);
    await panel.getByRole('button', { name: 'Run all' }).click();
    await expect.poll(() => panel.getByRole('status').textContent(), WAIT).toBe('3 of 3 passed');

    const coverage = panel.getByRole('region', { name: 'Coverage' });
    await expect.poll(async () => (await coverage.locator('p').first().innerText()).replace(/\s+/g, ' ').trim(), WAIT).toBe('5/5 states · 7/7 transitions · 4/4 tools');
    expect(await page.locator('.svelte-flow__edge-path.transition.untested').count()).toBe(0);
    expect(await page.locator('.state.untested').count()).toBe(0);

    const yaml = panel.getByRole('textbox', { name: 'Test YAML' });
    await yaml.fill('name: slow and fast\nsteps:\n  - user: Monday\n    tool_results:\n      check_availability: {timeout: true, status: 200}\n');
    const problems = panel.getByRole('list', { name: 'Problems in the test' });
    await expect.poll(() => problems.innerText(), WAIT).toContain('5:28');
    expect(await problems.innerText()).toContain('times out, so it has no status or body');
    await page.close();
  });
});
