import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { GUESSING_GAME_YAML, createFlow } from '../support/server.ts';
import { screenshot } from './browser.ts';
import { studioSuite } from './studio-screens-server.ts';
import { screenOnOnePage } from './studio.ts';

// The flows screen as a designer uses it, in Chromium at 1280×800 against the real server. The
// tests run in order on one account: it starts with no flows.
describe('the studio flows screen', () => {
  const rig = studioSuite();

  const open = (path = '/') => rig().open(path);
  // The tests about the list itself come to it afresh on one page (screenOnOnePage); the others
  // need a page of their own (an empty account, a failing server, the keyboard from the top).
  const flowsPage = screenOnOnePage(rig, { path: '/', link: 'Flows' });
  const api = (method: string, path: string, body?: unknown) => rig().server.request(method, path, { jwt: rig().account.jwt, body });
  const scrollWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');
  const flowLink = (page: Page, name: string) => page.getByRole('table', { name: 'Flows' }).getByRole('link', { name, exact: true });

  it('greets an account with no flows with a call to action for the guessing game', { timeout: 30_000 }, async () => {
    const page = await open('/');
    await page.getByRole('heading', { name: 'Design your first voice flow' }).waitFor();
    expect(await page.getByRole('button', { name: 'Start from the guessing game' }).isVisible()).toBe(true);
    expect(await page.title()).toBe('Flows · Voxflow Studio');
    expect(await scrollWidth(page)).toBeLessThanOrEqual(1280);
    await screenshot(page, 'studio-flows-empty');
    await page.close();
  });

  it('says when the server cannot be reached, and loads the list on retry', { timeout: 30_000 }, async () => {
    const page = await open('/sessions');
    await page.route('**/v1/flows', (route) => route.abort('connectionrefused'));
    await page.getByRole('link', { name: 'Flows', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: "Couldn't load your flows." });
    await alert.waitFor();
    expect(await alert.innerText()).toContain('The server cannot be reached');
    await page.unroute('**/v1/flows');
    await alert.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('heading', { name: 'Design your first voice flow' }).waitFor();
    await page.close();
  });

  it('creates a flow from the guessing-game template, opens it in the editor, and lists it', { timeout: 30_000 }, async () => {
    const page = await open('/');
    await page.getByRole('button', { name: 'New flow' }).click();
    const dialog = page.getByRole('dialog', { name: 'New flow' });
    expect(await dialog.getByRole('radio', { name: /Guessing game/ }).isChecked()).toBe(true);
    expect(await dialog.getByLabel('Name').inputValue()).toBe('Guessing game');
    await dialog.getByLabel('Name').fill('Ten questions');
    await screenshot(page, 'studio-flows-new-flow');
    await dialog.getByRole('button', { name: 'Create flow' }).click();

    await page.waitForURL(/\/flow-editor\?flow=/);
    const flowId = new URL(page.url()).searchParams.get('flow')!;
    const stored = await api('GET', `/v1/flows/${flowId}`);
    expect(stored.body).toMatchObject({ name: 'Ten questions', yaml_content: GUESSING_GAME_YAML });

    await page.goto(rig().server.url + '/');
    await flowLink(page, 'Ten questions').waitFor();
    await flowLink(page, 'Ten questions').click();
    await page.waitForURL(`**/flow-editor?flow=${flowId}`);
    await page.close();
  });

  it('creates a blank flow that validates cleanly, named as typed', { timeout: 30_000 }, async () => {
    const page = await open('/');
    await flowLink(page, 'Ten questions').waitFor();
    await page.getByRole('button', { name: 'New flow' }).click();
    const dialog = page.getByRole('dialog', { name: 'New flow' });
    await dialog.getByRole('radio', { name: /Blank/ }).check();
    expect(await dialog.getByLabel('Name').inputValue()).toBe('Untitled flow');
    await dialog.getByLabel('Name').fill('Support line');
    await dialog.getByLabel('Name').press('Enter');

    await page.waitForURL(/\/flow-editor\?flow=/);
    const stored = await api('GET', `/v1/flows/${new URL(page.url()).searchParams.get('flow')}`);
    expect(stored.body.name).toBe('Support line');
    const { document, diagnostics } = parseFlow(stored.body.yaml_content);
    expect(diagnostics).toEqual([]);
    expect(document?.id).toBe('support-line');
    await page.close();
  });

  it('refuses an empty name in the new-flow dialog without creating anything', { timeout: 30_000 }, async () => {
    const before = (await api('GET', '/v1/flows')).body.length;
    const page = await flowsPage();
    await flowLink(page, 'Support line').waitFor();
    await page.getByRole('button', { name: 'New flow' }).click();
    const dialog = page.getByRole('dialog', { name: 'New flow' });
    await dialog.getByLabel('Name').fill('   ');
    await dialog.getByRole('button', { name: 'Create flow' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'A flow needs a name.' }).waitFor();
    await dialog.getByLabel('Name').press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await api('GET', '/v1/flows')).body.length).toBe(before);
  });

  it('renames a flow in place: Escape cancels, Enter saves', { timeout: 30_000 }, async () => {
    const page = await flowsPage();
    await page.getByRole('button', { name: 'Rename Ten questions' }).click();
    const field = page.getByLabel('New name for Ten questions');
    expect(await field.inputValue()).toBe('Ten questions');
    await field.fill('Twenty questions');
    await field.press('Escape');
    await flowLink(page, 'Ten questions').waitFor();
    expect(await page.getByText('Twenty questions').count()).toBe(0);

    await page.getByRole('button', { name: 'Rename Ten questions' }).click();
    await page.getByLabel('New name for Ten questions').fill('Twenty questions');
    await page.getByLabel('New name for Ten questions').press('Enter');
    await flowLink(page, 'Twenty questions').waitFor();
    await page.getByRole('status').filter({ hasText: 'Renamed to “Twenty questions”.' }).waitFor();
    const names = (await api('GET', '/v1/flows')).body.map((f: { name: string }) => f.name);
    expect(names).toContain('Twenty questions');
    expect(names).not.toContain('Ten questions');
  });

  it('exports a flow as a .yaml download, byte for byte what was stored', { timeout: 30_000 }, async () => {
    const page = await flowsPage();
    await flowLink(page, 'Twenty questions').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export Twenty questions as YAML' }).click()]);
    expect(download.suggestedFilename()).toBe('twenty-questions.yaml');
    const bytes = await readFile((await download.path())!);
    expect(bytes.equals(Buffer.from(GUESSING_GAME_YAML, 'utf8'))).toBe(true);
  });

  it('deletes a flow only after confirmation', { timeout: 30_000 }, async () => {
    const page = await flowsPage();
    await page.getByRole('button', { name: 'Delete Support line' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “Support line”?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await flowLink(page, 'Support line').isVisible()).toBe(true);
    expect((await api('GET', '/v1/flows')).body.some((f: { name: string }) => f.name === 'Support line')).toBe(true);

    await page.getByRole('button', { name: 'Delete Support line' }).click();
    await dialog.getByRole('button', { name: 'Delete flow' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “Support line”.' }).waitFor();
    expect(await flowLink(page, 'Support line').count()).toBe(0);
    expect((await api('GET', '/v1/flows')).body.some((f: { name: string }) => f.name === 'Support line')).toBe(false);
  });

  it('keeps a long list with very long names inside 1280 px, with a filter', { timeout: 40_000 }, async () => {
    const names = ['Order status', 'Appointment booking', 'Restaurant reservations', 'Insurance claim intake', 'Pizza order with upsell', 'After-hours triage', 'Customer survey', 'L'.repeat(200)];
    for (const name of names) await createFlow(rig().server, rig().account.apiKey, name, GUESSING_GAME_YAML);
    const page = await flowsPage();
    await flowLink(page, 'Order status').waitFor();
    expect(await scrollWidth(page)).toBeLessThanOrEqual(1280);
    const table = page.getByRole('table', { name: 'Flows' });
    const box = (await table.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(1280);

    await page.getByPlaceholder('Filter flows by name').fill('STATUS');
    await expect.poll(() => table.getByRole('link').allInnerTexts()).toEqual(['Order status']);
    await page.getByPlaceholder('Filter flows by name').fill('');
    await page.evaluate('document.activeElement?.blur()');
    await screenshot(page, 'studio-flows');
  });

  it('is reachable by keyboard: a skip link, the screens in the nav, then the main actions, all with visible focus', { timeout: 30_000 }, async () => {
    const page = await open('/');
    await flowLink(page, 'Order status').waitFor();
    const reached: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate<{ text: string; focusRing: boolean } | null>(`(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const style = getComputedStyle(el);
        return { text: (el.getAttribute('aria-label') ?? el.innerText).trim(), focusRing: style.boxShadow !== 'none' || style.outlineStyle !== 'none' };
      })()`);
      if (!focused) continue;
      expect(focused.focusRing, `focus is visible on ${focused.text}`).toBe(true);
      reached.push(focused.text);
    }
    expect(reached[0]).toBe('Skip to main content');
    const order = ['Flows', 'Editor', 'Sessions', 'Settings', 'Sign out', 'Import YAML', 'New flow'].map((name) => reached.indexOf(name));
    expect(order.every((index) => index > 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));

    // The skip link lands on the screen's title, past the navigation.
    await page.goto(rig().server.url + '/');
    await flowLink(page, 'Order status').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Flows');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent?.trim()')).toBe('Import YAML');
    await page.close();
  });
});
