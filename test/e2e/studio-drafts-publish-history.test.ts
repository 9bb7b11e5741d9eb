// In Chromium against a real server: Save keeps edits in the draft (what a backend's
// sessions run does not change), Publish makes the draft the next version with a note, History
// shows a side-by-side diff of any two versions and publishes an old one again (a rollback that
// is itself a version), and two windows saving one draft meet a conflict instead of silently
// overwriting each other. Screenshots go to test-artifacts/.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { GUESSING_GAME_YAML } from '../support/server.ts';
import { connectVoice } from '../support/voice-client.ts';
import { screenshot } from './browser.ts';
import { WAIT, editorOnOnePage, node } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

// About drafts saved or not: only Save saves here (the autosave has tests of its own).
const rig = studioSuite({ autosave: false });
// Each test's flow opens on one page for the file (editorOnOnePage); a second window is a page of its own.
const openFlow = editorOnOnePage(rig);

const wonPrompt = (yaml: string) => parseFlow(yaml).document?.states.won?.ui?.prompt;
const ORIGINAL_WON = wonPrompt(GUESSING_GAME_YAML);

async function flowRecord(id: string) {
  return (await rig().server.request('GET', `/v1/flows/${id}`, { apiKey: rig().account.apiKey })).body;
}
async function draftRecord(id: string) {
  return (await rig().server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig().account.apiKey })).body;
}

/** Types a new card prompt for the `won` state in the inspector. */
async function setWonPrompt(page: Page, text: string) {
  await node(page, 'won').click();
  const cardPrompt = page.getByRole('textbox', { name: 'Card prompt (shown to the user)' });
  await cardPrompt.fill(text);
  await cardPrompt.blur();
  await expect.poll(() => node(page, 'won').locator('.excerpt').textContent(), WAIT).toBe(text);
}

const liveState = (page: Page) => page.getByTestId('live-state').textContent();

describe('drafts, publish and history in the editor', () => {
  it('Save keeps the edit in the draft, Publish makes it version 2, and History diffs and rolls back', async () => {
    const { page, id } = await openFlow('Versioned game');
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v1 · Draft: none/);

    // Save: the draft has the edit, the live flow does not.
    await setWonPrompt(page, 'You got it, well done!');
    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v1 · Draft: unpublished changes/);
    expect(wonPrompt((await draftRecord(id)).yaml_content)).toBe('You got it, well done!');
    const live = await flowRecord(id);
    expect(live).toMatchObject({ published_version: 1, has_draft: true });
    expect(wonPrompt(live.yaml_content)).toBe(ORIGINAL_WON);
    await screenshot(page, 'drafts-1-saved-draft-not-live');

    // Publish with a note.
    await page.getByRole('button', { name: 'Publish…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish the draft as version 2' });
    await dialog.getByRole('textbox').fill('Friendlier ending');
    await screenshot(page, 'drafts-2-publish-dialog');
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    // Publishing used the draft up: there is none until the next save.
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v2 · Draft: none/);
    const published = await flowRecord(id);
    expect(published).toMatchObject({ published_version: 2, has_draft: false });
    expect(wonPrompt(published.yaml_content)).toBe('You got it, well done!');
    const versions = (await rig().server.request('GET', `/v1/flows/${id}/versions`, { apiKey: rig().account.apiKey })).body;
    expect(versions[0]).toMatchObject({ number: 2, note: 'Friendlier ending', created_by: { kind: 'studio' }, published: true });

    // History: versions with notes, and a side-by-side diff of v1 against v2.
    await page.getByRole('button', { name: 'History' }).click();
    const history = page.getByRole('dialog', { name: 'History' });
    const list = history.getByRole('list', { name: 'Versions, newest first' });
    await expect.poll(() => list.locator('li').count(), WAIT).toBe(2);
    expect(await list.locator('li[data-version="2"]').textContent()).toMatch(/Version 2\s*Live.*Friendlier ending/s);
    await history.getByRole('combobox', { name: 'Left side' }).selectOption('1');
    await history.getByRole('combobox', { name: 'Right side' }).selectOption('2');
    const diff = history.getByTestId('yaml-diff');
    // Each side shows its own text, and the changed line is marked on both.
    await expect.poll(() => diff.locator('.cm-merge-a .cm-changedLine').allTextContents(), WAIT).toEqual(expect.arrayContaining([expect.stringContaining(ORIGINAL_WON!)]));
    await expect.poll(() => diff.locator('.cm-merge-b .cm-changedLine').allTextContents(), WAIT).toEqual(expect.arrayContaining([expect.stringContaining('You got it, well done!')]));
    expect(await history.getByText('Version 1', { exact: true }).first().isVisible()).toBe(true);
    await screenshot(page, 'drafts-3-history-diff');

    // Rollback: version 1 published again is version 3, live at once.
    const v1 = list.locator('li[data-version="1"]');
    await v1.getByRole('button', { name: 'Publish this version again' }).click();
    await v1.getByRole('button', { name: 'Publish', exact: true }).click();
    await expect.poll(() => list.locator('li').count(), WAIT).toBe(3);
    expect(await list.locator('li[data-version="3"]').textContent()).toMatch(/Version 3\s*Live.*Published again from version 1/s);
    await screenshot(page, 'drafts-4-rolled-back');
    await history.getByRole('button', { name: 'Close the history' }).click();
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v3/);
    const rolledBack = await flowRecord(id);
    expect(rolledBack.published_version).toBe(3);
    expect(rolledBack.yaml_content).toBe(GUESSING_GAME_YAML);
    // The flow had no draft, and still has none: the editor shows what is live now, not the text
    // rolled back from (which Publish would otherwise ship again).
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v3 · Draft: none/);
    await expect.poll(() => node(page, 'won').locator('.excerpt').textContent(), WAIT).toBe(ORIGINAL_WON);
    expect(await page.getByText('Unsaved changes').count()).toBe(0);
    expect(await flowRecord(id)).toMatchObject({ has_draft: false });

    // Open a version: its text comes into the editor as unsaved changes; nothing goes live.
    await page.getByRole('button', { name: 'History' }).click();
    await list.locator('li[data-version="2"]').getByRole('button', { name: 'Open this version' }).click();
    await expect.poll(() => node(page, 'won').locator('.excerpt').textContent(), WAIT).toBe('You got it, well done!');
    await expect.poll(() => page.getByText('Unsaved changes').isVisible(), WAIT).toBe(true);
    expect((await flowRecord(id)).published_version).toBe(3);
  }, 150_000);

  it('Discard draft asks first, saying the live version stays, then deletes the draft and shows the live text again', async () => {
    const { page, id } = await openFlow('Discarded edits');
    await setWonPrompt(page, 'An edit to throw away');
    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v1 · Draft: unpublished changes/);
    expect((await flowRecord(id)).has_draft).toBe(true);

    // Cancel keeps everything.
    await page.getByRole('button', { name: 'Discard draft' }).click();
    const confirm = page.getByRole('dialog', { name: 'Discard the draft?' });
    await confirm.waitFor(WAIT);
    expect(await confirm.textContent()).toMatch(/live version stays as it is/);
    await screenshot(page, 'drafts-7-discard-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect(await confirm.isVisible()).toBe(false);
    expect((await flowRecord(id)).has_draft).toBe(true);
    expect(await node(page, 'won').locator('.excerpt').textContent()).toBe('An edit to throw away');

    // Confirmed: the draft is gone on the server, the live text is back, and nothing went live.
    await page.getByRole('button', { name: 'Discard draft' }).click();
    await confirm.getByRole('button', { name: 'Discard draft' }).click();
    await expect.poll(() => node(page, 'won').locator('.excerpt').textContent(), WAIT).toBe(ORIGINAL_WON);
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v1 · Draft: none/);
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    const after = await flowRecord(id);
    expect(after).toMatchObject({ published_version: 1, has_draft: false });
    expect(after.yaml_content).toBe(GUESSING_GAME_YAML);
    expect((await draftRecord(id)).yaml_content).toBe(GUESSING_GAME_YAML);
    // With no draft and nothing typed there is nothing to discard or publish.
    expect(await page.getByRole('button', { name: 'Discard draft' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Publish…' }).isDisabled()).toBe(true);
    await screenshot(page, 'drafts-8-discarded');

    // Undo brings the discarded text back, as unsaved changes of a new draft.
    await page.getByRole('button', { name: 'Undo' }).click();
    await expect.poll(() => node(page, 'won').locator('.excerpt').textContent(), WAIT).toBe('An edit to throw away');
    await expect.poll(() => liveState(page), WAIT).toMatch(/Draft: unpublished changes/);
    expect((await flowRecord(id)).has_draft).toBe(false);
  }, 120_000);

  it('a draft saved in another window is a conflict: Keep mine saves over it, nothing is lost silently', async () => {
    const { page: first, id } = await openFlow('Two windows');
    const second = await rig().open(`/flow-editor?flow=${id}`);
    await second.locator('.svelte-flow__node').first().waitFor(WAIT);

    await setWonPrompt(first, 'Saved in the first window');
    await first.keyboard.press('Control+s');
    await expect.poll(() => first.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);

    await setWonPrompt(second, 'Saved in the second window');
    await second.keyboard.press('Control+s');
    const conflict = second.getByRole('alert').filter({ hasText: 'changed elsewhere' });
    await conflict.waitFor(WAIT);
    // Nothing of the second window's was written.
    expect(wonPrompt((await draftRecord(id)).yaml_content)).toBe('Saved in the first window');
    await screenshot(second, 'drafts-5-conflict');

    await conflict.getByRole('button', { name: 'Keep mine' }).click();
    await expect.poll(async () => wonPrompt((await draftRecord(id)).yaml_content), WAIT).toBe('Saved in the second window');
    await expect.poll(() => second.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);

    // The first window now holds a stale draft: its next save meets the conflict, and Reload brings the other text in.
    await setWonPrompt(first, 'First window again');
    await first.keyboard.press('Control+s');
    const stale = first.getByRole('alert').filter({ hasText: 'changed elsewhere' });
    await stale.waitFor(WAIT);
    await stale.getByRole('button', { name: 'Reload' }).click();
    await expect.poll(() => node(first, 'won').locator('.excerpt').textContent(), WAIT).toBe('Saved in the second window');
    expect(await first.getByText('Saved', { exact: true }).isVisible()).toBe(true);
    // Nothing of this went live.
    expect(wonPrompt((await flowRecord(id)).yaml_content)).toBe(ORIGINAL_WON);
    await second.close();
  }, 150_000);

  it('in the desktop app, File → Open YAML makes the file the flow\'s draft (not live), and Save YAML As exports the draft', async () => {
    const id = (await rig().server.request('POST', '/v1/flows', { apiKey: rig().account.apiKey, body: { name: 'Desk draft', yaml_content: GUESSING_GAME_YAML } })).body.id as string;
    const fileText = GUESSING_GAME_YAML.replace(`prompt: "${ORIGINAL_WON}"`, 'prompt: "From a file on disk"');
    expect(wonPrompt(fileText)).toBe('From a file on disk');
    const page = await rig().chromium.newPage();
    // The preload's bridge stood in for by a script (no Electron binary here), as in studio-flows-desktop-menu.
    const bridge = { token: rig().account.jwt, email: rig().account.email, file: { name: 'edited.yaml', text: fileText } };
    await page.addInitScript(`(() => {
      const { token, email, file } = ${JSON.stringify(bridge)};
      const listeners = new Set();
      const record = (window.desktopCalls = []);
      window.fireMenu = (command) => listeners.forEach((listener) => listener(command));
      window.voxflowDesktop = {
        version: async () => '0.1.0',
        localSignIn: async () => ({ access_token: token, email }),
        openYamlFile: async () => (record.push(['openYamlFile']), file),
        saveYamlFile: async (name, text) => (record.push(['saveYamlFile', name, text]), true),
        onMenuCommand: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
      };
    })();`);
    await page.goto(`${rig().server.url}/flow-editor?flow=${id}`);
    await page.locator('.svelte-flow__node').first().waitFor(WAIT);
    await page.evaluate(() => (globalThis as any).fireMenu('open-yaml'));
    await expect.poll(async () => (await draftRecord(id)).yaml_content, WAIT).toBe(fileText);
    await expect.poll(() => node(page, 'won').locator('.excerpt').textContent(), WAIT).toBe('From a file on disk');
    await expect.poll(() => liveState(page), WAIT).toMatch(/Live: v1 · Draft: unpublished changes/);
    // Still in the editor, and nothing went live.
    expect(new URL(page.url()).pathname).toBe('/flow-editor');
    expect((await flowRecord(id)).yaml_content).toBe(GUESSING_GAME_YAML);

    await page.evaluate(() => (globalThis as any).fireMenu('save-yaml'));
    await expect.poll(() => page.evaluate(() => (globalThis as any).desktopCalls as unknown[][]), WAIT).toContainEqual(['saveYamlFile', 'Desk-draft.yaml', fileText]);
    await page.close();
  }, 90_000);

  it('the Sessions screen says which version of its flow each session ran', async () => {
    const api = (method: string, path: string, body?: unknown) => rig().server.request(method, path, { apiKey: rig().account.apiKey, body });
    const id = (await api('POST', '/v1/flows', { name: 'Which version ran', yaml_content: GUESSING_GAME_YAML })).body.id as string;
    /** A session started the way a business's backend does, run until the flow has started. */
    const backendSession = async () => {
      const started = await api('POST', '/v1/sessions', { flow_id: id });
      const client = await connectVoice(started.body.ws_url);
      await client.waitFor('flow_state');
      client.close();
      await client.closed;
    };
    await backendSession();
    await api('PUT', `/v1/flows/${id}`, { yaml_content: GUESSING_GAME_YAML.replace(`prompt: "${ORIGINAL_WON}"`, 'prompt: "Second version"') });
    await backendSession();

    const page = await rig().open('/sessions');
    const rows = page.getByRole('table').locator('tbody tr').filter({ hasText: 'Which version ran' });
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    // Newest first: the session after the PUT ran version 2, the one before it version 1.
    await expect.poll(() => rows.locator('.version').allTextContents(), WAIT).toEqual(['v2', 'v1']);
    await screenshot(page, 'drafts-6-sessions-say-version');
    await page.close();
  }, 90_000);

  it('Test-talk saves the edit to the draft and runs the draft, while the live version stays as it was', async () => {
    const { page, id } = await openFlow('Test the draft');
    await node(page, 'setup').click();
    const cardPrompt = page.getByRole('textbox', { name: 'Card prompt (shown to the user)' });
    await cardPrompt.fill('Only the draft says this.');
    await cardPrompt.blur();
    // Talk with unsaved changes saves them first, to the draft.
    await page.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = page.getByRole('region', { name: 'Test talk' });
    await panel.getByRole('button', { name: 'Text only' }).click();
    await expect.poll(() => panel.getByTestId('talk-state-prompt').innerText(), WAIT).toBe('Only the draft says this.');
    await expect.poll(async () => parseFlow((await draftRecord(id)).yaml_content).document?.states.setup?.ui?.prompt, WAIT).toBe('Only the draft says this.');
    const live = await flowRecord(id);
    expect(live).toMatchObject({ published_version: 1, has_draft: true });
    expect(parseFlow(live.yaml_content).document?.states.setup?.ui?.prompt).toBe(parseFlow(GUESSING_GAME_YAML).document?.states.setup?.ui?.prompt);
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), WAIT).toBe('Ended');
    const sessions = (await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey })).body as Array<Record<string, unknown>>;
    expect(sessions.find((s) => s.flow_id === id)).toMatchObject({ flow_draft: true, flow_version: null });
  }, 90_000);
});
