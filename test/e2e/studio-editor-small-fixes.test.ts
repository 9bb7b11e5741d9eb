// In Chromium: the smaller things a first real session tripped on. Ctrl+F
// searches the YAML; edits on two lines are two undo steps however quickly they follow each
// other; Delete asks about every chosen state; the keyboard on the canvas prints no warnings; a
// new state is not dropped onto self-loop labels; `version: 1.0` says to write "1.0" in quotes;
// and the answers the studio expects (a flow with errors, a visitor not signed in) are not failed
// requests in the browser's console.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML } from '../support/server.ts';
import { WAIT, editorOnOnePage, node, nodeNames } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();
// Each test opens a flow of its own, on one page for the file (editorOnOnePage).
const openFlow = editorOnOnePage(rig);

/** Failed answers (4xx, 5xx) the page receives from now on. */
function failedResponses(page: Page): string[] {
  const failed: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
  });
  return failed;
}

/** Console errors and warnings of this page from now on. */
function consoleProblems(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') seen.push(`${message.type()}: ${message.text()}`);
  });
  return seen;
}

describe('the YAML pane', () => {
  it('opens a search with Ctrl+F and finds every match', async () => {
    const { page } = await openFlow('Search');
    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+f');
    const find = page.getByRole('textbox', { name: 'Find' });
    await find.waitFor(WAIT);
    await page.keyboard.type('play_again');
    await page.keyboard.press('Enter');
    const matches = GUESSING_GAME_YAML.split('play_again').length - 1;
    await expect.poll(() => page.locator('.cm-searchMatch').count(), WAIT).toBeGreaterThanOrEqual(Math.min(matches, 2));
    await expect.poll(() => page.locator('.cm-searchMatch-selected').count(), WAIT).toBe(1);
    await page.keyboard.press('Escape');
    await expect.poll(() => find.count(), WAIT).toBe(0);
  }, 60_000);

  it('undoes edits on two lines as two steps, however quickly the second follows', async () => {
    const { page } = await openFlow('Two lines');
    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-content').click();
    // Both within a fraction of a second: line 1, then the last line.
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('End');
    await page.keyboard.type(' # first');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('# second');
    await expect.poll(() => page.locator('.cm-line', { hasText: '# second' }).count(), WAIT).toBe(1);
    await page.keyboard.press('Control+z');
    await expect.poll(() => page.locator('.cm-line', { hasText: '# second' }).count(), WAIT).toBe(0);
    // CodeMirror draws only the lines in view: back to the top to read line 1.
    await page.keyboard.press('Control+Home');
    await expect.poll(() => page.locator('.cm-line', { hasText: '# first' }).count(), WAIT).toBe(1);
    await page.keyboard.press('Control+z');
    await expect.poll(() => page.locator('.cm-line', { hasText: '# first' }).count(), WAIT).toBe(0);
  }, 60_000);

  it('says to write "1.0" in quotes for version: 1.0', async () => {
    const { page } = await openFlow('Version');
    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-line', { hasText: /^version:/ }).click();
    await page.keyboard.press('End');
    await page.keyboard.press('Shift+Home');
    await page.keyboard.type('version: 1.0');
    const problem = page.getByRole('region', { name: 'Problems' }).getByRole('button', { name: /version/ });
    await expect.poll(() => problem.innerText(), WAIT).toContain('write "1.0" in quotes');
    expect(await problem.innerText()).not.toContain('the number 1');
  }, 60_000);
});

describe('the canvas', () => {
  it('deletes every state chosen with Ctrl+click at once, and one undo brings them back', async () => {
    const { page } = await openFlow('Delete several');
    await node(page, 'won').locator('.name').click();
    await node(page, 'lost').locator('.name').click({ modifiers: ['Control'] });
    await expect.poll(() => page.locator('.svelte-flow__node.selected').count(), WAIT).toBe(2);
    await node(page, 'lost').press('Delete');
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.getByRole('heading').innerText(), WAIT).toBe('Delete 2 states: lost and won?');
    await dialog.getByRole('button', { name: 'Delete 2 states' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toEqual(['setup', 'playing']);
    await page.locator('.svelte-flow__pane').click({ position: { x: 30, y: 300 } });
    await page.keyboard.press('Control+z');
    await expect.poll(async () => (await nodeNames(page)).sort(), WAIT).toEqual(['lost', 'playing', 'setup', 'won']);
  }, 60_000);

  it('prints no warnings while the keyboard moves round the canvas', async () => {
    const { page } = await openFlow('Keys');
    const problems = consoleProblems(page);
    await node(page, 'setup').focus();
    for (const key of ['Enter', 'ArrowRight', 'ArrowLeft', 'Shift', 'Control', 'Tab', 'Enter', 'Escape', 'Tab', 'Shift+Tab', 'a', ' ']) await page.keyboard.press(key);
    // One more round trip to the page, so every console message of those keys has arrived.
    await page.evaluate(() => new Promise((resolve) => (globalThis as any).requestAnimationFrame(resolve)));
    expect(problems).toEqual([]);
  }, 60_000);

  it('puts a new state clear of the self-loop labels', async () => {
    const { page } = await openFlow('New state room');
    // Nothing selected: the new state goes to the middle of the view, where playing's loop labels are.
    await page.locator('.svelte-flow__pane').click({ position: { x: 30, y: 300 } });
    await page.getByRole('button', { name: '+ State' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toContain('new_state');
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    const covered = async () => {
      const added = (await node(page, 'new_state').boundingBox())!;
      const labels = await page.locator('.svelte-flow__edge-label .tool').evaluateAll((els) =>
        els.map((el: any) => ({ text: el.textContent.trim(), ...JSON.parse(JSON.stringify(el.getBoundingClientRect())) })),
      );
      return labels.filter((l) => l.x < added.x + added.width && added.x < l.x + l.width && l.y < added.y + added.height && added.y < l.y + l.height).map((l) => l.text);
    };
    await expect.poll(covered, WAIT).toEqual([]);
  }, 60_000);
});

describe('expected answers', () => {
  // A draft with errors is saved (it is work in progress); the refusal is Publish's.
  it('saves a draft with errors, and refuses to publish it without a failed request', async () => {
    const { page } = await openFlow('Publish refused');
    const failed = failedResponses(page);
    const problems = consoleProblems(page);
    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('x');
    await page.getByRole('region', { name: 'Problems' }).getByRole('button').first().waitFor(WAIT);
    await page.keyboard.press('Control+s');
    await page.getByText('Saved', { exact: true }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Publish…' }).click();
    const dialog = page.getByRole('dialog', { name: /^Publish the draft/ });
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    const refusal = dialog.getByRole('alert').filter({ hasText: 'Not published' });
    await refusal.waitFor(WAIT);
    expect(await refusal.innerText()).toMatch(/line \d+, column \d+/);
    expect(failed).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);

  it('shows a visitor who never signed in the form without asking the server to refresh', async () => {
    const page = await rig().chromium.newPage();
    const failed = failedResponses(page);
    const problems = consoleProblems(page);
    await page.goto(`${rig().server.url}/settings`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    expect(failed).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);
});
