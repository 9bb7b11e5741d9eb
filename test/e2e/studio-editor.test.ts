// The flow editor in Chromium at 1280×800, against a real server: what a designer sees on the
// canvas, in the YAML and in the problems list, and what survives a save and a reload.
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { GUESSING_GAME_YAML, createFlow } from '../support/server.ts';
import { screenshot } from './browser.ts';
import { editorOnOnePage } from './studio-editor-page.ts';
// The flows screens' server: it serves a snapshot of the built studio (see its comment).
import { startScreensServer } from './studio-screens-server.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

const COMMENTS = GUESSING_GAME_YAML.split('\n').filter((l) => l.trim().startsWith('#')).map((l) => l.trim());
const WAIT = { timeout: 20_000 };

let rig: StudioRig;
let closeServer: () => Promise<void>;

beforeAll(async () => {
  const server = await startScreensServer();
  closeServer = () => server.close();
  // Unsaved changes are asserted here (the leave guard, the header): only Save saves.
  rig = await startStudioRig({ server, autosave: false });
}, 90_000);

afterAll(async () => {
  await rig?.close();
  await closeServer?.();
});

// Each test opens a flow of its own, on one page for the file (editorOnOnePage).
const openFlow = editorOnOnePage(() => rig);

const node = (page: Page, state: string) => page.locator(`.svelte-flow__node[data-id="${state}"]`);
const nodeNames = (page: Page) => page.locator('.svelte-flow__node .name').allTextContents();
/** The tool names on the edges (a self-loop's label starts with ↻). */
const edgeLabels = async (page: Page) => (await page.locator('.svelte-flow__edge-label .tool').allTextContents()).map((t) => t.replace('↻', '').trim());
const problems = (page: Page) => page.getByRole('region', { name: 'Problems' });

/** The YAML as the designer exports it. */
async function exportedYaml(page: Page): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export YAML' }).click()]);
  return readFile((await download.path())!, 'utf8');
}

async function dragBetween(page: Page, from: { x: number; y: number }, to: { x: number; y: number }) {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + (to.x - from.x) / 3, from.y + (to.y - from.y) / 3, { steps: 5 });
  await page.mouse.move(to.x, to.y, { steps: 10 });
  await page.mouse.up();
}

/** A point on the canvas with nothing drawn on it (no state, edge label or control). */
async function emptySpot(page: Page): Promise<{ x: number; y: number }> {
  const box = (await page.locator('.svelte-flow__pane').boundingBox())!;
  const spot = await page.evaluate((b) => {
    const doc = (globalThis as any).document;
    for (let y = b.y + b.height - 80; y > b.y + 80; y -= 40)
      for (let x = b.x + 80; x < b.x + b.width - 80; x += 40) {
        const offsets: Array<[number, number]> = [[0, 0], [-50, -30], [50, 30], [-50, 30], [50, -30]];
        const near = offsets.every(([dx, dy]) => doc.elementFromPoint(x + dx, y + dy)?.classList.contains('svelte-flow__pane'));
        if (near) return { x, y };
      }
    return null;
  }, box);
  if (!spot) throw new Error('no empty place on the canvas');
  return spot;
}

async function centre(locator: ReturnType<Page['locator']>) {
  const box = (await locator.boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

describe('the flow editor', () => {
  it('shows the guessing game as 4 states with labelled transitions, self-loops and the start marked', async () => {
    const { page } = await openFlow('Guessing game');
    await expect.poll(() => nodeNames(page), WAIT).toEqual(['setup', 'playing', 'won', 'lost']);
    await expect.poll(() => page.locator('.svelte-flow__edge').count(), WAIT).toBe(7);
    expect((await edgeLabels(page)).sort()).toEqual(
      ['begin_game', 'guess_correct', 'guess_wrong', 'out_of_questions', 'play_again', 'play_again', 'record_answer'].sort(),
    );
    expect(await page.locator('.svelte-flow__edge-label .tool', { hasText: '↻' }).allTextContents()).toHaveLength(2);
    await expect.poll(() => node(page, 'setup').locator('.state.initial').count()).toBe(1);
    expect(await node(page, 'setup').getByText('Start', { exact: true }).isVisible()).toBe(true);
    expect(await page.locator('.state.initial').count()).toBe(1);
    expect(await page.getByText('Saved', { exact: true }).isVisible()).toBe(true);
    await screenshot(page, 'studio-editor');
  }, 90_000);

  it('adds a state, a tool and a transition on the canvas, and the YAML follows with its comments', async () => {
    const { page } = await openFlow('Add on canvas');
    await page.getByRole('button', { name: '+ State' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toContain('new_state');
    // The new state's name is focused in the inspector: type its real name.
    const stateName = page.getByRole('textbox', { name: 'State', exact: true });
    await expect.poll(() => stateName.evaluate((el) => el === (globalThis as any).document.activeElement), WAIT).toBe(true);
    await stateName.fill('hint');
    await stateName.press('Enter');
    await expect.poll(() => nodeNames(page), WAIT).toContain('hint');
    // The new state went clear of playing's self-loop labels, and the view followed it: show all.
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    let viewport = '';
    await expect
      .poll(async () => {
        const now = await page.locator('.svelte-flow__viewport').evaluate((el: any) => el.style.transform);
        const settled = now === viewport;
        viewport = now;
        return settled && (await node(page, 'playing').locator('.svelte-flow__handle.connector').boundingBox())!.x > (await page.locator('.svelte-flow__pane').boundingBox())!.x;
      }, WAIT)
      .toBe(true);

    // Drag from playing's connector to the new state: the editor asks for the tool.
    await dragBetween(page, await centre(node(page, 'playing').locator('.svelte-flow__handle.connector')), await centre(node(page, 'hint')));
    const form = page.getByRole('form', { name: 'New transition' });
    await form.waitFor(WAIT);
    await form.getByLabel('a new tool').check();
    await form.getByRole('textbox', { name: 'Tool name' }).fill('give_hint');
    await form.getByRole('textbox', { name: /What it is for/ }).fill('Give the caller a hint.');
    await form.getByRole('button', { name: 'Add transition' }).click();

    await expect.poll(() => edgeLabels(page), WAIT).toContain('give_hint');
    expect(await node(page, 'playing').locator('.chip', { hasText: 'give_hint' }).getAttribute('title')).toBe('give_hint moves to hint');
    await expect.poll(() => page.getByText('Unsaved changes').isVisible()).toBe(true);

    const yaml = await exportedYaml(page);
    const data = parseFlow(yaml);
    expect(data.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(data.document!.states.playing!.transitions!.on_tool_call!.give_hint).toBe('hint');
    expect(data.document!.states.playing!.tools!.give_hint).toEqual({ description: 'Give the caller a hint.' });
    expect(data.document!.states.playing!.agent.tools).toContain('give_hint');
    expect(Object.keys(data.document!.states)).toEqual(['setup', 'playing', 'won', 'lost', 'hint']);
    for (const comment of COMMENTS) expect(yaml).toContain(comment);

    // The edge's label opens its tool in the inspector, with the transition it makes.
    await page.locator('.svelte-flow__edge-label .tool', { hasText: 'give_hint' }).click();
    const tool = page.locator('.inspector li.tool[data-tool="give_hint"]');
    await expect.poll(() => tool.getByRole('combobox', { name: 'When called' }).inputValue(), WAIT).toBe('hint');
    expect(await page.getByRole('textbox', { name: 'State', exact: true }).inputValue()).toBe('playing');
    await screenshot(page, 'studio-editor-inspector');

    // Dropped on empty canvas, a connection makes a new state there.
    await dragBetween(page, await centre(node(page, 'hint').locator('.svelte-flow__handle.connector')), await emptySpot(page));
    await form.waitFor(WAIT);
    await form.getByRole('textbox', { name: 'New state' }).fill('goodbye');
    await form.getByRole('textbox', { name: 'Tool name' }).fill('say_goodbye');
    await form.getByRole('button', { name: 'Add transition' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toContain('goodbye');
    expect(await node(page, 'hint').locator('.chip', { hasText: 'say_goodbye' }).getAttribute('title')).toBe('say_goodbye moves to goodbye');

    // With the YAML shown, choosing the state scrolls the YAML to it.
    await page.getByRole('tab', { name: 'YAML' }).click();
    await node(page, 'hint').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.cm-line', { hasText: /^ {2}hint:$/ }).count(), WAIT).toBe(1);
    await screenshot(page, 'studio-editor-added-transition');
  }, 120_000);

  it('shows a broken transition at its line and column in the problems and the gutter, and follows the fix', async () => {
    const { page } = await openFlow('Broken YAML');
    await page.getByRole('tab', { name: 'YAML' }).click();
    const content = page.locator('.cm-content');
    await content.click();
    // The last line is lost's `play_again: setup`: point it at a state that does not exist.
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Backspace');
    for (let i = 0; i < 'setup'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('winner');

    const lines = GUESSING_GAME_YAML.trimEnd().split('\n');
    const line = lines.length;
    const column = lines[line - 1]!.indexOf('setup') + 1;
    const problem = problems(page).getByRole('button', { name: new RegExp(`^${line}:${column}\\b.*winner`) });
    await problem.waitFor(WAIT);
    await expect.poll(() => page.locator('.cm-gutter-lint .cm-lint-marker-error').count(), WAIT).toBe(1);
    await expect.poll(() => node(page, 'lost').locator('.pill.error').textContent(), WAIT).toBe('1');
    expect(await node(page, 'lost').locator('.chip.dangling').textContent()).toContain('play_again');
    await screenshot(page, 'studio-editor-diagnostic');

    // Choosing the problem puts the cursor on it and selects its state.
    await problem.click();
    await expect.poll(() => page.locator('.cm-activeLine').textContent(), WAIT).toBe('        play_again: winner');
    await expect.poll(() => node(page, 'lost').locator('.state.selected').count(), WAIT).toBe(1);

    // Fix it: the graph follows, with the edge to won.
    await page.keyboard.press('End');
    for (let i = 0; i < 'winner'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.type('won');
    await expect.poll(() => problems(page).getByText('none').isVisible(), WAIT).toBe(true);
    await expect.poll(() => node(page, 'lost').locator('.chip', { hasText: 'play_again' }).getAttribute('title'), WAIT).toBe('play_again moves to won');
    expect(await page.locator('.cm-gutter-lint .cm-lint-marker-error').count()).toBe(0);

    // A draft with errors is saved (docs/flows.md#drafts: it is work in progress, not live);
    // publishing it is refused, with the problem at its line and column, and the live flow keeps
    // its text.
    await page.keyboard.press('End');
    await page.keyboard.type('x');
    await problems(page).getByRole('button', { name: /wonx/ }).waitFor(WAIT);
    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    await page.getByRole('button', { name: 'Publish…' }).click();
    const dialog = page.getByRole('dialog', { name: /^Publish the draft/ });
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    const refusal = dialog.getByRole('alert').filter({ hasText: 'Not published' });
    await refusal.waitFor(WAIT);
    expect(await refusal.textContent()).toContain(`line ${line}, column ${column}`);
    expect(await refusal.getByRole('button', { name: new RegExp(`^${line}:${column}\\b.*wonx`) }).count()).toBe(1);
    await screenshot(page, 'studio-editor-publish-refused');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('.cm-line', { hasText: 'play_again: wonx' }).click();
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await expect.poll(() => problems(page).getByText('none').isVisible(), WAIT).toBe(true);

    // A syntax error greys the graph out, keeping the last readable version.
    await page.keyboard.type(': [');
    await expect.poll(() => page.locator('.canvas.stale').count(), WAIT).toBe(1);
    expect(await nodeNames(page)).toEqual(['setup', 'playing', 'won', 'lost']);
    await screenshot(page, 'studio-editor-stale');
  }, 120_000);

  it('undoes and redoes canvas edits and YAML typing with the keyboard and the buttons', async () => {
    const { page } = await openFlow('Undo');
    // Keyboard only: focus the state on the canvas and choose it with Enter.
    await node(page, 'won').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('textbox', { name: 'State', exact: true }).inputValue(), WAIT).toBe('won');
    await node(page, 'won').press('Delete');
    await page.getByRole('dialog').getByRole('button', { name: 'Delete state' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toEqual(['setup', 'playing', 'lost']);

    await page.locator('.svelte-flow__pane').click({ position: { x: 30, y: 300 } });
    await page.keyboard.press('Control+z');
    await expect.poll(() => nodeNames(page), WAIT).toEqual(['setup', 'playing', 'won', 'lost']);
    await page.keyboard.press('Control+Shift+z');
    await expect.poll(() => nodeNames(page), WAIT).toEqual(['setup', 'playing', 'lost']);
    await page.getByRole('button', { name: 'Undo' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toEqual(['setup', 'playing', 'won', 'lost']);
    expect(await page.getByRole('button', { name: 'Undo' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Redo' }).click();
    await expect.poll(() => nodeNames(page), WAIT).toEqual(['setup', 'playing', 'lost']);
    await page.getByRole('button', { name: 'Undo' }).click();

    // Typing in the YAML is one step per burst, in the same history as the canvas.
    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('# a note');
    await expect.poll(() => page.locator('.cm-line', { hasText: '# a note' }).count(), WAIT).toBe(1);
    await page.keyboard.press('Control+z');
    await expect.poll(() => page.locator('.cm-line', { hasText: '# a note' }).count(), WAIT).toBe(0);
    expect(await nodeNames(page)).toEqual(['setup', 'playing', 'won', 'lost']);
    await page.keyboard.press('Control+y');
    await expect.poll(() => page.locator('.cm-line', { hasText: '# a note' }).count(), WAIT).toBe(1);

    // An inspector field is in the same history: Ctrl+Z in it undoes what was typed there.
    await page.getByRole('tab', { name: 'Inspector' }).click();
    await node(page, 'won').focus();
    await page.keyboard.press('Enter');
    const cardPrompt = page.getByRole('textbox', { name: 'Card prompt (shown to the user)' });
    const original = await cardPrompt.inputValue();
    await cardPrompt.fill('Hooray!');
    await expect.poll(() => node(page, 'won').locator('.excerpt').textContent(), WAIT).toBe('Hooray!');
    await cardPrompt.press('Control+z');
    await expect.poll(() => cardPrompt.inputValue(), WAIT).toBe(original);
    expect(await node(page, 'won').locator('.excerpt').textContent()).toBe(original);
  }, 120_000);

  it('saves the YAML and a dragged position, and both are there after a reload', async () => {
    const { page, id } = await openFlow('Save and reload');
    const won = node(page, 'won');
    const before = await won.evaluate((el) => (el as any).style.transform);
    const start = await centre(won.locator('header'));
    await dragBetween(page, start, { x: start.x + 120, y: start.y + 70 });
    await expect.poll(() => won.evaluate((el) => (el as any).style.transform), WAIT).not.toBe(before);
    const moved = await won.evaluate((el) => (el as any).style.transform);

    await won.click();
    const cardPrompt = page.getByRole('textbox', { name: 'Card prompt (shown to the user)' });
    await cardPrompt.fill('You found it!');
    await cardPrompt.blur();
    await expect.poll(() => won.locator('.excerpt').textContent(), WAIT).toBe('You found it!');
    await expect.poll(() => page.getByText('Unsaved changes').isVisible(), WAIT).toBe(true);
    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);

    // Save writes the draft (docs/flows.md#drafts): the live version is untouched until Publish.
    const stored = await rig.server.request('GET', `/v1/flows/${id}`, { apiKey: rig.account.apiKey });
    const draft = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
    expect(parseFlow(draft.body.yaml_content).document!.states.won!.ui!.prompt).toBe('You found it!');
    for (const comment of COMMENTS) expect(draft.body.yaml_content).toContain(comment);
    expect(stored.body).toMatchObject({ published_version: 1, has_draft: true });
    expect(parseFlow(stored.body.yaml_content).document!.states.won!.ui!.prompt).not.toBe('You found it!');
    expect(Object.keys(stored.body.layout.positions).sort()).toEqual(['lost', 'playing', 'setup', 'won']);

    await page.reload();
    await node(page, 'won').waitFor(WAIT);
    await expect.poll(() => node(page, 'won').evaluate((el) => (el as any).style.transform), WAIT).toBe(moved);
    expect(await node(page, 'won').locator('.excerpt').textContent()).toBe('You found it!');
  }, 120_000);

  it('renames the flow from the header at once', async () => {
    const { page, id } = await openFlow('Old name');
    const name = page.getByRole('textbox', { name: 'Flow name' });
    await name.fill('Ten questions');
    await name.press('Enter');
    await expect.poll(async () => (await rig.server.request('GET', `/v1/flows/${id}`, { apiKey: rig.account.apiKey })).body.name, WAIT).toBe('Ten questions');
    expect(await page.getByText('Saved', { exact: true }).isVisible()).toBe(true);
  }, 60_000);

  it('asks before leaving with unsaved changes, and stays when told to', async () => {
    const { page } = await openFlow('Guard');
    await node(page, 'lost').click();
    await page.getByRole('button', { name: 'Set as start' }).click();
    await expect.poll(() => node(page, 'lost').locator('.state.initial').count(), WAIT).toBe(1);

    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.getByRole('link', { name: 'Flows' }).click();
    await expect.poll(() => asked.length, WAIT).toBe(1);
    expect(asked[0]).toContain('unsaved changes');
    expect(new URL(page.url()).pathname).toBe('/flow-editor');
    // Still all four, now in the reading order from the new start state.
    expect(await nodeNames(page)).toEqual(['lost', 'setup', 'playing', 'won']);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('link', { name: 'Flows' }).click();
    await expect.poll(() => new URL(page.url()).pathname, WAIT).toBe('/');
  }, 90_000);

  it('follows the desktop menu: undo, redo, save the flow, export the YAML', async () => {
    const id = await createFlow(rig.server, rig.account.apiKey, 'Desktop menu');
    const page = await rig.chromium.newPage();
    // The Electron preload's bridge, as the studio sees it; menu commands are fired from the test.
    await page.addInitScript(
      ([token, email]) => {
        const listeners = new Set<(command: string) => void>();
        const w = globalThis as any;
        w.menuCommand = (command: string) => listeners.forEach((l) => l(command));
        w.voxflowDesktop = {
          version: async () => 'test',
          localSignIn: async () => ({ access_token: token, email }),
          openYamlFile: async () => null,
          saveYamlFile: async (name: string, text: string) => ((w.savedYaml = { name, text }), true),
          onMenuCommand: (listener: (command: string) => void) => (listeners.add(listener), () => listeners.delete(listener)),
        };
      },
      [rig.account.jwt, rig.account.email],
    );
    await page.goto(`${rig.server.url}/flow-editor?flow=${id}`);
    await node(page, 'lost').waitFor(WAIT);
    await node(page, 'lost').locator('.name').click();
    await page.getByRole('button', { name: 'Set as start' }).click();
    await expect.poll(() => node(page, 'lost').locator('.state.initial').count(), WAIT).toBe(1);

    const menu = (command: string) => page.evaluate((c) => (globalThis as any).menuCommand(c), command);
    await menu('undo');
    await expect.poll(() => node(page, 'setup').locator('.state.initial').count(), WAIT).toBe(1);
    await menu('redo');
    await expect.poll(() => node(page, 'lost').locator('.state.initial').count(), WAIT).toBe(1);
    await menu('save-flow');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    // The menu's save writes the draft, and Save YAML As exports it (docs/flows.md#drafts).
    const stored = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
    expect(parseFlow(stored.body.yaml_content).document!.initial_state).toBe('lost');
    await menu('save-yaml');
    // Polled every 100 ms, not every frame (Playwright's default), which keeps the page drawing while it waits.
    const saved = await page.waitForFunction(() => (globalThis as any).savedYaml, null, { ...WAIT, polling: 100 });
    const { name, text } = (await saved.jsonValue()) as { name: string; text: string };
    expect(name).toBe('Desktop-menu.yaml');
    expect(text).toBe(stored.body.yaml_content);
    await page.close();
  }, 90_000);

  it('says what to do without a flow, and offers the way back for an unknown one', async () => {
    const page = await rig.open('/flow-editor');
    await page.getByRole('heading', { name: 'No flow open' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Go to Flows' }).click();
    await expect.poll(() => new URL(page.url()).pathname, WAIT).toBe('/');

    await page.goto(`${rig.server.url}/flow-editor?flow=no-such-flow`);
    await page.getByRole('heading', { name: 'Flow not found' }).waitFor(WAIT);
    await screenshot(page, 'studio-editor-not-found');
    await page.getByRole('button', { name: 'Back to Flows' }).click();
    await expect.poll(() => new URL(page.url()).pathname, WAIT).toBe('/');
    await page.close();
  }, 60_000);
});
