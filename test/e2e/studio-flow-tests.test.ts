// The editor's Tests tab in Chromium (docs/testing.md#flow-tests): a suite is run from the tab
// against the draft, a failed test shows its diff (expected against actual) with a way to its state
// on the graph, and what no test reaches is painted on the graph in a style of its own and listed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from './browser.ts';
import { WAIT, node, openFlow } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

let rig: StudioRig;

beforeAll(async () => {
  rig = await startStudioRig();
}, 60_000);

afterAll(async () => {
  await rig?.close();
});

const SUITE = `tests:
  - name: the game is moved by hand
    steps:
      - simulate: {tool: begin_game, arguments: {secret_thing: a pear, questions_asked: "0"}}
        expect: {state: playing}
      - simulate: {tool: guess_correct}
        expect: {state: won, card: "You got it: a pear!"}
  - name: ready means won
    steps:
      - user: "I'm ready"
        expect:
          tool_called: {name: begin_game, arguments: {secret_thing: a cat}}
          state: won
`;

/** Link ids of the edges painted as untested, as "from.tool". */
async function untestedEdges(page: Page): Promise<string[]> {
  const labels = await page.locator('.svelte-flow__edge-label .tool.untested').evaluateAll((buttons) => buttons.map((b) => (b as unknown as { title: string }).title));
  return labels.map((title) => title.replace(' (no flow test takes it)', '')).sort();
}

describe('the Tests tab', () => {
  it('runs a suite, shows a failure as a diff, and paints what no test reaches', { timeout: 90_000 }, async () => {
    const { page, id } = await openFlow(rig, 'Game with tests');
    const imported = await rig.server.request('POST', `/v1/flows/${id}/tests/import`, { apiKey: rig.account.apiKey, body: { yaml_content: SUITE } });
    expect(imported.status).toBe(201);

    await page.getByRole('tab', { name: 'Tests' }).click();
    const panel = page.getByRole('region', { name: 'Flow tests' });
    await panel.getByRole('listitem').filter({ hasText: 'ready means won' }).waitFor(WAIT);
    // Nothing is painted before a run.
    expect(await page.locator('.state.untested').count()).toBe(0);

    await panel.getByRole('button', { name: 'Run all' }).click();
    await expect.poll(() => panel.getByRole('status').textContent(), WAIT).toBe('1 of 2 passed');

    // The failure, as expected against actual.
    const failed = panel.getByRole('listitem').filter({ hasText: 'ready means won' });
    const diff = failed.getByRole('table', { name: 'Expected against actual, step 1' });
    const rows = await diff.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    expect(rows).toEqual([['state', 'won', 'playing']]);
    // The passing test shows no diff.
    expect(await panel.getByRole('listitem').filter({ hasText: 'moved by hand' }).getByRole('table').count()).toBe(0);

    // What no test reaches: listed, and painted on the graph apart from the live path.
    const coverage = panel.getByRole('region', { name: 'Coverage' });
    await expect.poll(async () => (await coverage.locator('p').first().innerText()).replace(/\s+/g, ' ').trim(), WAIT).toBe('3/4 states · 2/7 transitions · 2/6 tools');
    const listed = await coverage.getByRole('list', { name: 'Not reached by any test' }).getByRole('button').allTextContents();
    expect(listed).toEqual([
      'state lost',
      'playing —record_answer→ playing',
      'playing —guess_wrong→ playing',
      'playing —out_of_questions→ lost',
      'won —play_again→ setup',
      'lost —play_again→ setup',
    ]);
    await expect.poll(() => untestedEdges(page), WAIT).toEqual([
      'guess_wrong: stays in playing',
      'out_of_questions: playing → lost',
      'play_again: lost → setup',
      'play_again: won → setup',
      'record_answer: stays in playing',
    ]);
    expect(await page.locator('.svelte-flow__edge-path.transition.untested').count()).toBe(5);
    await expect.poll(() => node(page, 'lost').locator('.state').getAttribute('class'), WAIT).toContain('untested');
    expect(await node(page, 'won').locator('.state').getAttribute('class')).not.toContain('untested');
    // Violet and dotted: neither the live path's teal nor the errors' red. Polled: the border's
    // colour eases in through a CSS transition (read mid-way once: rgb(141, 75, 216)).
    const style = () =>
      node(page, 'lost').locator('.state').evaluate((el) => {
        const s = (globalThis as any).getComputedStyle(el);
        return { border: s.borderTopStyle, colour: s.borderTopColor };
      });
    await expect.poll(style, WAIT).toEqual({ border: 'dotted', colour: 'rgb(139, 70, 216)' });
    await screenshot(page, 'studio-flow-tests');

    // From the failure to its state on the graph.
    await failed.getByRole('button', { name: 'Show playing on the graph' }).click();
    await expect.poll(() => node(page, 'playing').locator('.state').getAttribute('class'), WAIT).toContain('selected');

    // Painting can be turned off.
    await coverage.getByRole('checkbox', { name: 'Paint what no test reaches on the graph' }).uncheck();
    await expect.poll(() => page.locator('.svelte-flow__edge-path.transition.untested').count(), WAIT).toBe(0);

    // The designer fixes the wrong expectation in place and runs that test again.
    await failed.getByRole('button', { name: 'Edit ready means won' }).click();
    const yaml = panel.getByRole('textbox', { name: 'Test YAML' });
    await yaml.fill((await yaml.inputValue()).replace('state: won', 'state: playing'));
    await panel.getByRole('button', { name: 'Save test' }).click();
    await expect.poll(() => yaml.inputValue(), WAIT).toBe('');
    await failed.getByRole('button', { name: 'Run ready means won' }).click();
    await expect.poll(() => panel.getByRole('status').textContent(), WAIT).toBe('1 of 1 passed');
    expect(await failed.getByRole('table').count()).toBe(0);

    // A test file from disk is checked in the text box, then added to the flow's tests.
    await panel.locator('input[type="file"]').setInputFiles({
      name: 'lost.tests.yaml',
      mimeType: 'application/yaml',
      buffer: Buffer.from('name: a game given up\nsteps:\n  - simulate: {tool: begin_game, arguments: {secret_thing: a pear}}\n  - simulate: {tool: out_of_questions}\n    expect: {state: lost}\n'),
    });
    await expect.poll(() => yaml.inputValue(), WAIT).toContain('name: a game given up');
    await panel.getByRole('button', { name: 'Add test' }).click();
    await panel.getByRole('listitem').filter({ hasText: 'a game given up' }).waitFor(WAIT);
  });
});
