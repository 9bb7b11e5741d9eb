import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { GUESSING_GAME_YAML } from '../support/server.ts';
import { screenshot, tempDir } from './browser.ts';
import { studioSuite } from './studio-screens-server.ts';
import { screenOnOnePage } from './studio.ts';

// Importing YAML files on the flows screen: checked in the page with the server's validator
// before anything is uploaded, so a broken file shows its problems by line and never reaches
// the account.
describe('importing a flow from a YAML file', () => {
  const rig = studioSuite();
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(async () => {
    await dir?.remove();
  });

  const flows = async () => (await rig().server.request('GET', '/v1/flows', { jwt: rig().account.jwt })).body as Array<{ id: string; name: string }>;
  async function fileWith(name: string, text: string): Promise<string> {
    const path = join(dir.path, name);
    await writeFile(path, text);
    return path;
  }
  // Each test comes to the flows screen afresh, on one page for the file (screenOnOnePage).
  const flowsPage = screenOnOnePage(rig, { path: '/', link: 'Flows' });
  async function openFlows(): Promise<Page> {
    const page = await flowsPage();
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor();
    return page;
  }

  it('imports a valid file chosen with the Import YAML button, named after the file', { timeout: 30_000 }, async () => {
    const yaml = GUESSING_GAME_YAML.replace('id: guessing-game', 'id: order-status');
    const page = await openFlows();
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Import YAML' }).first().click()]);
    await chooser.setFiles(await fileWith('order-status.yaml', yaml));

    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByText('No problems found.').waitFor();
    expect(await dialog.getByText('order-status.yaml').isVisible()).toBe(true);
    expect(await dialog.getByLabel('Name').inputValue()).toBe('Order status');
    await dialog.getByRole('button', { name: 'Import flow' }).click();

    await page.getByRole('status').filter({ hasText: 'Imported “Order status”.' }).waitFor();
    await page.getByRole('table', { name: 'Flows' }).getByRole('link', { name: 'Order status', exact: true }).waitFor();
    const stored = (await flows()).find((f) => f.name === 'Order status')!;
    const record = await rig().server.request('GET', `/v1/flows/${stored.id}`, { jwt: rig().account.jwt });
    expect(record.body.yaml_content).toBe(yaml);
  });

  it('shows the errors of an invalid file with their lines, and uploads nothing', { timeout: 30_000 }, async () => {
    const broken = GUESSING_GAME_YAML.replace('initial_state: setup', 'initial_state: start_here');
    const expected = parseFlow(broken).diagnostics.filter((d) => d.severity === 'error');
    expect(expected).toHaveLength(1);
    const [problem] = expected;
    const before = (await flows()).length;

    const page = await openFlows();
    await page.getByLabel('Import a flow from a YAML file').setInputFiles(await fileWith('broken.yaml', broken));
    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByRole('alert').filter({ hasText: "This file has 1 error, so it can't be imported." }).waitFor();
    // The first error with its line, the line itself, and the full list with line:column.
    expect(await dialog.getByText(`Line ${problem!.line}, column ${problem!.column}: ${problem!.message}`).isVisible()).toBe(true);
    expect(await dialog.locator('.line.marked').innerText()).toContain('initial_state: start_here');
    expect(await dialog.getByRole('region', { name: 'Problems' }).innerText()).toContain(`${problem!.line}:${problem!.column}`);
    expect(await dialog.getByRole('button', { name: 'Import flow' }).count()).toBe(0);
    await screenshot(page, 'studio-flows-import-error');

    // Fixed and chosen again from the same dialog: it imports.
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), dialog.getByRole('button', { name: 'Choose another file' }).click()]);
    await chooser.setFiles(await fileWith('fixed.yaml', GUESSING_GAME_YAML));
    await page.getByRole('dialog', { name: 'Import a flow' }).getByText('No problems found.').waitFor();
    await page.getByRole('dialog', { name: 'Import a flow' }).getByRole('button', { name: 'Cancel' }).click();
    expect((await flows()).length).toBe(before);
  });

  it('opens a file with errors in the editor as a new unsaved flow, which the first save after the fix creates', { timeout: 60_000 }, async () => {
    const broken = GUESSING_GAME_YAML.replace('initial_state: setup', 'initial_state: start_here');
    const before = (await flows()).length;
    const page = await openFlows();
    await page.getByLabel('Import a flow from a YAML file').setInputFiles(await fileWith('ten-questions.yaml', broken));
    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByRole('button', { name: 'Fix it in the editor' }).click();

    // The editor, on a flow that exists only in the page: named after the file, unsaved, its error listed.
    await expect.poll(() => new URL(page.url()).pathname + new URL(page.url()).search, { timeout: 15_000 }).toMatch(/^\/flow-editor\?draft=/);
    await expect.poll(() => page.getByLabel('Flow name').inputValue(), { timeout: 15_000 }).toBe('Ten questions');
    await page.getByText('Unsaved changes').waitFor();
    await page.getByRole('region', { name: 'Problems' }).getByRole('button', { name: /start_here/ }).waitFor();
    await expect.poll(() => page.locator('.svelte-flow__node').count(), { timeout: 15_000 }).toBe(4);
    expect((await flows()).length).toBe(before);
    await screenshot(page, 'studio-flows-import-fix-in-editor');

    // Saving with the error is refused here, and creates nothing.
    await page.keyboard.press('Control+s');
    await page.getByRole('alert').filter({ hasText: 'Not saved.' }).waitFor();
    expect((await flows()).length).toBe(before);

    // Fixed in the YAML and saved: now it is a flow of the account, and the address says which.
    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-line', { hasText: 'initial_state: start_here' }).click();
    await page.keyboard.press('End');
    for (let i = 0; i < 'start_here'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('setup');
    await page.getByRole('region', { name: 'Problems' }).getByText('none').waitFor();
    await page.keyboard.press('Control+s');
    await page.getByText('Saved', { exact: true }).waitFor();
    await expect.poll(async () => (await flows()).length, { timeout: 15_000 }).toBe(before + 1);
    const created = (await flows()).find((f) => f.name === 'Ten questions')!;
    await expect.poll(() => page.url(), { timeout: 15_000 }).toBe(`${rig().server.url}/flow-editor?flow=${created.id}`);
    const stored = await rig().server.request('GET', `/v1/flows/${created.id}`, { jwt: rig().account.jwt });
    expect(parseFlow(stored.body.yaml_content).document!.initial_state).toBe('setup');
    expect(Object.keys(stored.body.layout.positions).sort()).toEqual(['lost', 'playing', 'setup', 'won']);
    // The same editor goes on (nothing reloaded), and a reload opens the saved flow.
    expect(await page.getByRole('tab', { name: 'YAML', selected: true }).count()).toBe(1);
    await page.reload();
    await expect.poll(() => page.getByLabel('Flow name').inputValue(), { timeout: 15_000 }).toBe('Ten questions');
    await page.getByText('Saved', { exact: true }).waitFor();
  });

  it('shows a YAML syntax error by its line too', { timeout: 30_000 }, async () => {
    const text = 'id: broken\nversion: "1.0.0"\nstates: [\n';
    const [problem] = parseFlow(text).diagnostics;
    const page = await openFlows();
    await page.getByLabel('Import a flow from a YAML file').setInputFiles(await fileWith('syntax.yml', text));
    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByText(`Line ${problem!.line}, column ${problem!.column}`, { exact: false }).waitFor();
    await dialog.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  it('imports a file with warnings and says so', { timeout: 30_000 }, async () => {
    const withWarning = GUESSING_GAME_YAML.replace('states:\n', 'states:\n  orphan:\n    agent:\n      prompt: Nobody comes here.\n');
    const warnings = parseFlow(withWarning).diagnostics;
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((d) => d.severity === 'warning')).toBe(true);
    const page = await openFlows();
    await page.getByLabel('Import a flow from a YAML file').setInputFiles(await fileWith('with_orphan.yaml', withWarning));
    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByText(/^This flow works\./).waitFor();
    await dialog.getByLabel('Name').fill('Has an orphan');
    await dialog.getByRole('button', { name: 'Import flow' }).click();
    await page.getByRole('status').filter({ hasText: /Imported “Has an orphan” with \d+ warnings? to look at in the editor\./ }).waitFor();
  });

  it("shows the server's diagnostics when the server refuses a file the page accepted", { timeout: 30_000 }, async () => {
    const page = await openFlows();
    // A newer server could know a rule this page does not: its 422 must read like the page's own check.
    const refusal = { severity: 'error', code: 'unknown_key', message: 'unknown key "voice" (a newer rule)', path: ['voice'], line: 4, column: 1 };
    await page.route('**/v1/flows', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({ status: 422, contentType: 'application/json', body: JSON.stringify({ error: { code: 'invalid_flow', message: 'The flow document has 1 error.', details: [refusal] } }) })
        : route.continue(),
    );
    await page.getByLabel('Import a flow from a YAML file').setInputFiles(await fileWith('newer.yaml', GUESSING_GAME_YAML));
    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByRole('button', { name: 'Import flow' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'The server found 1 error in this file.' }).waitFor();
    expect(await dialog.getByText('Line 4, column 1: unknown key "voice" (a newer rule)').isVisible()).toBe(true);
    expect(await dialog.getByText('The server refused the flow: The flow document has 1 error.').isVisible()).toBe(true);
  });
});
