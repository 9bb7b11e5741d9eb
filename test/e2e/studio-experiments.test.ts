// The Experiments screen, as a designer uses it: from the flows list, start an experiment between
// two published versions, see new sessions counted per version with the success rate's 95 %
// interval, and conclude it with a winner, which is published.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { studioSuite } from './studio-screens-server.ts';

const flowText = (first: string) => `id: split
version: "1.0.0"
initial_state: ${first}
states:
  ${first}:
    agent: { prompt: Say hello. }
`;

describe('the Experiments screen', () => {
  const rig = studioSuite();

  async function twoVersions(name: string): Promise<string> {
    const { server, account } = rig();
    const created = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name, yaml_content: flowText('one') } });
    expect(created.status, created.text).toBe(201);
    const flowId = created.body.id as string;
    const second = await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { yaml_content: flowText('two') } });
    expect(second.body.published_version).toBe(2);
    return flowId;
  }

  async function openFromFlows(name: string): Promise<Page> {
    const page = await rig().open('/');
    await page.getByRole('button', { name: `Experiments of ${name}` }).click();
    await page.waitForURL(/\/experiments\?flow=/);
    await page.getByRole('heading', { name: `Experiments · ${name}`, level: 1 }).waitFor();
    return page;
  }

  it('starts an experiment, shows the sessions per version with the interval, and concludes it with a winner', { timeout: 90_000 }, async () => {
    const name = `Greeting test ${Date.now()}`;
    const flowId = await twoVersions(name);
    const page = await openFromFlows(name);
    await page.getByText('No experiments yet.').waitFor();

    await page.getByRole('button', { name: 'New experiment' }).click();
    const form = page.getByRole('form', { name: 'New experiment' });
    await form.getByLabel('Name').fill('Shorter greeting');
    // The two newest versions are chosen, half and half.
    expect(await form.getByLabel('Weight of v1').inputValue()).toBe('50');
    await form.getByLabel('Weight of v2').fill('30');
    await form.getByRole('button', { name: 'Start experiment' }).click();
    await page.getByRole('status').filter({ hasText: 'Started “Shorter greeting”' }).waitFor();

    const { server, account } = rig();
    const [experiment] = (await server.request('GET', `/v1/flows/${flowId}/experiments`, { apiKey: account.apiKey })).body;
    expect(experiment).toMatchObject({ name: 'Shorter greeting', status: 'running', arms: [{ version: 2, weight: 30 }, { version: 1, weight: 50 }] });

    // Twelve callers' sessions, each given an arm.
    const given: Record<number, number> = { 1: 0, 2: 0 };
    for (let i = 0; i < 12; i++) {
      const made = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId, metadata: { caller_id: `+1555010${String(i).padStart(4, '0')}` } } });
      given[made.body.experiment_arm as number]! += 1;
    }
    await page.getByRole('button', { name: 'Shorter greeting' }).click();
    const results = page.getByRole('table', { name: 'Results per version' });
    await expect
      .poll(async () => (await results.getByRole('row').allInnerTexts()).map((row) => row.replace(/\s+/g, ' ').trim()).filter((row) => /^v\d/.test(row)))
      .toEqual([`v2 30 ${given[2]} 0 — 0 — —`, `v1 50 ${given[1]} 0 — 0 — —`]);
    expect(await page.getByText('The intervals overlap (or there are too few calls)').count()).toBe(1);

    await page.getByRole('combobox', { name: /^Winner/ }).selectOption({ label: 'v2' });
    await page.getByRole('button', { name: 'Conclude…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Conclude and publish' }).click();
    await page.getByRole('status').filter({ hasText: 'version 2 is published' }).waitFor();
    expect(await page.getByRole('table', { name: 'Experiments' }).innerText()).toContain('Concluded: v2 won');
    const flow = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    // v2 was live already: nothing to publish again.
    expect(flow.body.published_version).toBe(2);
    expect((await server.request('GET', `/v1/flows/${flowId}/experiments/${experiment.id}`, { apiKey: account.apiKey })).body.winner).toBe(2);
    expect(rig().chromium.pageErrors).toEqual([]);
    await page.close();
  });

  it('offers no second experiment while one runs, and Stop makes room for one', { timeout: 60_000 }, async () => {
    const name = `Busy flow ${Date.now()}`;
    const flowId = await twoVersions(name);
    const { server, account } = rig();
    await server.request('POST', `/v1/flows/${flowId}/experiments`, { jwt: account.jwt, body: { name: 'Already on', arms: [{ version: 1, weight: 1 }, { version: 2, weight: 1 }] } });
    const page = await openFromFlows(name);
    await page.getByRole('table', { name: 'Experiments' }).getByText('Running').waitFor();
    // While one runs, New experiment is not offered.
    expect(await page.getByRole('button', { name: 'New experiment' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('status').filter({ hasText: 'Stopped “Already on”' }).waitFor();
    expect(await page.getByRole('button', { name: 'New experiment' }).isDisabled()).toBe(false);
    await page.close();
  });
});
