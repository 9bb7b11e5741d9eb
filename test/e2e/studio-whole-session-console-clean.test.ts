// A whole editing session and a typed test-talk in Chromium, as a designer
// does them, with not one error or warning in the browser's console from start to end. The
// studio runs against a server whose model is the protocol-faithful fake (typed turns move the
// guessing game), so nothing is left out for want of a provider.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, screenshot, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { WAIT, node, nodeNames } from './studio-editor-page.ts';
import { signInBrowser } from './studio.ts';

let chromium: TestBrowser;
let dir: Awaited<ReturnType<typeof tempDir>>;
let rig: VoiceRig;

beforeAll(async () => {
  dir = await tempDir();
  [chromium, rig] = await Promise.all([
    writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })),
    startVoiceRig({ rules: GUESSING_GAME_RULES, stt: 'none' }),
  ]);
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await rig?.close();
  await dir?.remove();
});

/** Every console message of the page that is an error or a warning, and every uncaught exception. */
function consoleProblems(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') seen.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => seen.push(`exception: ${error.message}`));
  return seen;
}

describe('a whole session in the studio', () => {
  it('edits a flow every way, saves it, talks to it by typing, and the console stays clean', async () => {
    const page = await chromium.newPage();
    const problems = consoleProblems(page);
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(rig.server.url + '/');
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor(WAIT);

    // Open the flow from the list.
    await page.getByRole('link', { name: 'Guessing game' }).first().click();
    await node(page, 'lost').waitFor(WAIT);

    // Inspector: a card prompt, a rename by Enter, a tool with a parameter.
    await node(page, 'won').locator('.name').click();
    await page.getByRole('textbox', { name: 'Card prompt (shown to the user)' }).fill('You found it!');
    const stateName = page.getByRole('textbox', { name: 'State', exact: true });
    await node(page, 'lost').locator('.name').click();
    await stateName.fill('gave_up');
    await stateName.press('Enter');
    await expect.poll(() => nodeNames(page), WAIT).toContain('gave_up');
    await page.getByRole('textbox', { name: 'New tool name' }).fill('leave');
    await page.getByRole('textbox', { name: 'New tool description' }).fill('The caller wants to stop.');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('.inspector li.tool[data-tool="leave"] .head').waitFor(WAIT);
    await page.getByRole('button', { name: '+ Parameter' }).click();
    await page.keyboard.type('reason');
    await page.keyboard.press('Enter');

    // Canvas: keys on a state, a new state, a group chosen and deleted, undo, auto-layout, fit.
    await node(page, 'setup').focus();
    for (const key of ['Enter', 'ArrowRight', 'ArrowLeft', 'Tab', 'Escape']) await page.keyboard.press(key);
    await page.getByRole('button', { name: '+ State' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toContain('new_state');
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    await node(page, 'new_state').locator('.name').click();
    await node(page, 'new_state').press('Delete');
    await page.getByRole('dialog').getByRole('button', { name: 'Delete state' }).click();
    await expect.poll(() => nodeNames(page), WAIT).not.toContain('new_state');
    await page.locator('.svelte-flow__pane').click({ position: { x: 30, y: 300 } });
    await page.keyboard.press('Control+z');
    await expect.poll(() => nodeNames(page), WAIT).toContain('new_state');
    await page.keyboard.press('Control+Shift+z');
    await expect.poll(() => nodeNames(page), WAIT).not.toContain('new_state');
    await page.getByRole('button', { name: 'Auto-layout' }).click();
    await page.getByRole('button', { name: 'Fit', exact: true }).click();

    // YAML: search, type, undo.
    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+f');
    await page.getByRole('textbox', { name: 'Find' }).waitFor(WAIT);
    await page.keyboard.type('play_again');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('# reviewed');
    await page.keyboard.press('Control+z');
    await page.keyboard.press('Control+y');

    // A draft with errors is saved (docs/flows.md#drafts), a publish the validator refuses, then
    // the fix and a save that goes through.
    await page.keyboard.type(': [');
    await expect.poll(() => page.locator('.canvas.stale').count(), WAIT).toBe(1);
    await page.keyboard.press('Control+s');
    await page.getByText('Saved', { exact: true }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Publish…' }).click();
    const publish = page.getByRole('dialog', { name: /^Publish the draft/ });
    await publish.getByRole('button', { name: 'Publish', exact: true }).click();
    await publish.getByRole('alert').filter({ hasText: 'Not published' }).waitFor(WAIT);
    await publish.getByRole('button', { name: 'Cancel' }).click();
    // Back into the YAML, just after the ': [' typed at the start of the last line (': [# reviewed',
    // the redo having left the cursor before the comment). The closed dialog hands the focus back
    // to the button that opened it: wait for the dialog to be gone and for the editor to have the
    // focus, or (seen once, with a second suite running beside) the keys can go to the button.
    // Then put the cursor there by keys: focusing the editor does not always keep its old
    // selection (seen once in a quiet run: the three Backspaces deleted nothing and the canvas
    // stayed stale).
    await publish.waitFor({ state: 'hidden', ...WAIT });
    await page.locator('.cm-content').focus();
    await expect.poll(() => page.evaluate(() => (globalThis as any).document.activeElement?.closest('.cm-editor') != null), WAIT).toBe(true);
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Home');
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
    for (let i = 0; i < 3; i++) await page.keyboard.press('Backspace');
    await expect.poll(() => page.locator('.canvas.stale').count(), WAIT).toBe(0);
    await page.keyboard.press('Control+s');
    await page.getByText('Saved', { exact: true }).waitFor(WAIT);

    // Test-talk, typed: the model starts the game, the graph follows, then hang up.
    await page.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = page.getByRole('region', { name: 'Test talk' });
    await panel.getByRole('button', { name: 'Text only' }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), WAIT).toMatch(/^Live · text only/);
    await expect.poll(() => panel.getByRole('log').innerText(), WAIT).toContain('Welcome to ten questions!');
    await panel.getByRole('textbox', { name: 'Type a turn' }).fill("I'm ready");
    await page.keyboard.press('Enter');
    await expect.poll(() => panel.getByTestId('talk-state-name').innerText(), WAIT).toBe('playing');
    await expect.poll(() => node(page, 'playing').locator('.talk-active').count(), WAIT).toBe(1);
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), WAIT).toBe('Ended');
    await screenshot(page, 'studio-whole-session');

    // The session in the list: a studio session has no session token to show.
    await page.getByRole('link', { name: 'Sessions' }).click();
    const table = page.getByRole('table', { name: 'Sessions' });
    await table.waitFor(WAIT);
    const first = table.getByRole('row').nth(1);
    expect(await first.innerText()).toContain('Guessing game');
    expect(await first.locator('code.token').count()).toBe(0);
    expect(await first.innerText()).not.toContain('…');

    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
