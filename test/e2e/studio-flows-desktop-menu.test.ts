import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML } from '../support/server.ts';
import { studioSuite } from './studio-screens-server.ts';

// The studio inside the desktop app, with the preload's bridge stood in for by a script (there
// is no Electron binary here): it signs in to the local account without the form, the native
// menu's "New flow…" and "Open YAML…" reach the flows screen from anywhere, and files are opened
// and saved through the bridge instead of the browser's file input and downloads.
describe('the studio in the desktop app', () => {
  const rig = studioSuite();

  /** A page whose window.voxflowDesktop behaves like the preload's, recording what it is asked. */
  async function desktopPage(path: string, file: { name: string; text: string } | null): Promise<Page> {
    const page = await rig().chromium.newPage();
    // A script as text: a function would be serialized with the test transpiler's helpers in it.
    const bridge = { token: rig().account.jwt, email: rig().account.email, file };
    await page.addInitScript(`(() => {
      const { token, email, file } = ${JSON.stringify(bridge)};
      const listeners = new Set();
      const record = (window.desktopCalls = []);
      window.fireMenu = (command) => listeners.forEach((listener) => listener(command));
      window.voxflowDesktop = {
        version: async () => '0.1.0',
        localSignIn: async () => (record.push(['localSignIn']), { access_token: token, email }),
        openYamlFile: async () => (record.push(['openYamlFile']), file),
        saveYamlFile: async (name, text) => (record.push(['saveYamlFile', name, text]), true),
        onMenuCommand: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
      };
    })();`);
    await page.goto(rig().server.url + path);
    return page;
  }
  const calls = (page: Page) => page.evaluate(() => (globalThis as any).desktopCalls as unknown[][]);

  it('signs in to the local account without asking, and offers no sign-out', { timeout: 30_000 }, async () => {
    const page = await desktopPage('/', null);
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor();
    expect(await calls(page)).toContainEqual(['localSignIn']);
    const nav = page.getByRole('navigation', { name: 'Studio' });
    expect(await nav.innerText()).toContain(rig().account.email);
    expect(await nav.innerText()).toContain('Local account');
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await page.close();
  });

  it('opens the new-flow dialog on the flows screen from the menu, from another screen', { timeout: 30_000 }, async () => {
    const page = await desktopPage('/settings', null);
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    await page.evaluate(() => (globalThis as any).fireMenu('new-flow'));
    const dialog = page.getByRole('dialog', { name: 'New flow' });
    await dialog.waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await dialog.getByLabel('Name').inputValue()).toBe('Guessing game');
    // Commands the editor handles itself do nothing here.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.evaluate(() => (globalThis as any).fireMenu('save-flow'));
    expect(new URL(page.url()).pathname).toBe('/');
    await page.close();
  });

  it('imports through the native open dialog from the menu, and exports through the native save dialog', { timeout: 30_000 }, async () => {
    const page = await desktopPage('/sessions', { name: 'desk-flow.yaml', text: GUESSING_GAME_YAML });
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    await page.evaluate(() => (globalThis as any).fireMenu('open-yaml'));
    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByText('No problems found.').waitFor();
    expect(await dialog.getByLabel('Name').inputValue()).toBe('Desk flow');
    await dialog.getByRole('button', { name: 'Import flow' }).click();
    await page.getByRole('table', { name: 'Flows' }).getByRole('link', { name: 'Desk flow' }).waitFor();
    expect(await calls(page)).toContainEqual(['openYamlFile']);

    // The header's Import YAML button uses the native dialog too.
    await page.getByRole('button', { name: 'Import YAML' }).click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await calls(page)).filter(([call]) => call === 'openYamlFile')).toHaveLength(2);

    await page.getByRole('button', { name: 'Export Desk flow as YAML' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “Desk flow” as desk-flow.yaml.' }).waitFor();
    expect(await calls(page)).toContainEqual(['saveYamlFile', 'desk-flow.yaml', GUESSING_GAME_YAML]);
    await page.close();
  });
});
