// The editor saves the draft by itself a moment after editing pauses ("Saving…", then "Saved"),
// keeps every keystroke typed while a save is on its way, and leaves saving to Save alone when
// Settings > Editor "Save drafts automatically" is off (kept in the browser across reloads).
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createFlow } from '../support/server.ts';
import { WAIT, openFlow, storedYaml } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();

/** The header's save status as shown. */
const status = async (page: Page) => ((await page.locator('header .status').textContent()) ?? '').trim();

/** Every text the header's save status shows from now on, in order (no repeats). */
async function recordStatus(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const w = globalThis as any;
    const el = w.document.querySelector('header .status');
    w.statusSeen = [el.textContent.trim()];
    new w.MutationObserver(() => {
      const text = el.textContent.trim();
      if (w.statusSeen.at(-1) !== text) w.statusSeen.push(text);
    }).observe(el, { subtree: true, childList: true, characterData: true });
  });
  return () => page.evaluate(() => (globalThis as any).statusSeen as string[]);
}

async function typeAtEndOfYaml(page: Page, text: string) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(text);
}

describe('autosave of the draft', () => {
  it('saves after a pause in typing, saying Saving… then Saved, and keeps what is typed while a save is on its way', async () => {
    const { page, id } = await openFlow(rig(), 'Autosaved');
    await page.getByRole('tab', { name: 'YAML' }).click();
    const seen = await recordStatus(page);

    // Each draft save is held 2 s on its way to the server, so typing goes on while it is in flight.
    let inFlight = 0;
    await page.route('**/v1/flows/*/draft', async (route) => {
      if (route.request().method() !== 'PUT') return route.continue();
      inFlight++;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await route.continue();
    });

    await typeAtEndOfYaml(page, '# first');
    // No Save pressed: the pause saves it.
    await expect.poll(() => inFlight, WAIT).toBe(1);
    await page.keyboard.type(' and second');
    await expect.poll(async () => (await storedYaml(rig(), id)).trimEnd().endsWith('# first and second'), { timeout: 30_000 }).toBe(true);
    await expect.poll(() => status(page), WAIT).toBe('Saved');
    expect(inFlight).toBe(2);
    const statuses = await seen();
    expect(statuses[0]).toBe('Saved');
    expect(statuses).toContain('Unsaved changes');
    expect(statuses).toContain('Saving…');
    expect(statuses.slice(statuses.indexOf('Saving…'))).toContain('Saved');
    expect(statuses.at(-1)).toBe('Saved');
    // The live version is untouched: autosave writes the draft only.
    const live = await rig().server.request('GET', `/v1/flows/${id}`, { apiKey: rig().account.apiKey });
    expect(live.body.yaml_content).toBe(GUESSING_GAME_YAML);
    await page.close();
  }, 90_000);

  it('with "Save drafts automatically" off in Settings, only Save saves, and the choice stays after a reload', async () => {
    const id = await createFlow(rig().server, rig().account.apiKey, 'Saved by hand', GUESSING_GAME_YAML);
    const page = await rig().open('/settings');
    const setting = page.getByRole('checkbox', { name: 'Save drafts automatically' });
    await setting.waitFor(WAIT);
    expect(await setting.isChecked()).toBe(true);
    await setting.uncheck();
    await page.reload();
    await setting.waitFor(WAIT);
    expect(await setting.isChecked()).toBe(false);

    await page.goto(`${rig().server.url}/flow-editor?flow=${id}`);
    await page.locator('.svelte-flow__node').first().waitFor(WAIT);
    await page.getByRole('tab', { name: 'YAML' }).click();
    await typeAtEndOfYaml(page, '# by hand');
    await expect.poll(() => status(page), WAIT).toBe('Unsaved changes');
    await page.waitForTimeout(4_000);
    expect(await status(page)).toBe('Unsaved changes');
    expect(await storedYaml(rig(), id)).toBe(GUESSING_GAME_YAML);
    await page.keyboard.press('Control+s');
    await expect.poll(() => status(page), WAIT).toBe('Saved');
    expect((await storedYaml(rig(), id)).trimEnd().endsWith('# by hand')).toBe(true);
    await page.close();
  }, 90_000);
});
