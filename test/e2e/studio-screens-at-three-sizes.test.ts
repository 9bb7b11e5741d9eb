// In Chromium: the studio at 1024×700, 1280×800 and 1920×1080. The graph stays
// on screen when the window is resized; the side panel takes its share of a big window and
// remembers the width it was dragged to; no screen scrolls sideways at any of the three sizes.
// Every screen is photographed at each size into test-artifacts/ (studio-<screen>-<w>x<h>.png).
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFlow } from '../support/server.ts';
import { screenshot } from './browser.ts';
import { WAIT, node } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();
const SIZES = [
  { width: 1024, height: 700 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];

let flowId: string;
beforeAll(async () => {
  flowId = await createFlow(rig().server, rig().account.apiKey, 'Guessing game');
});

/** States drawn (partly) outside the canvas. */
async function statesOffCanvas(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const pane = doc.querySelector('.svelte-flow__pane').getBoundingClientRect();
    return [...doc.querySelectorAll('.svelte-flow__node')]
      .filter((el: any) => {
        const r = el.getBoundingClientRect();
        return r.left < pane.left - 1 || r.top < pane.top - 1 || r.right > pane.right + 1 || r.bottom > pane.bottom + 1;
      })
      .map((el: any) => el.dataset.id);
  });
}

/** What scrolls sideways: the page itself, or the screen's main area. */
function sidewaysScroll(page: Page): Promise<{ page: boolean; main: boolean }> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const main = doc.querySelector('main');
    return { page: doc.documentElement.scrollWidth > doc.documentElement.clientWidth + 1, main: main.scrollWidth > main.clientWidth + 1 };
  });
}

const sidePanelWidth = (page: Page) => page.getByRole('complementary', { name: 'Flow details' }).evaluate((el: any) => Math.round(el.getBoundingClientRect().width));

describe('the studio at three window sizes', () => {
  it('keeps the whole graph on screen when the window shrinks to 1024×700, the side panel inside the window', async () => {
    const page = await rig().open(`/flow-editor?flow=${flowId}`);
    await node(page, 'lost').waitFor(WAIT);
    await expect.poll(() => statesOffCanvas(page), WAIT).toEqual([]);
    await page.setViewportSize({ width: 1024, height: 700 });
    await expect.poll(() => statesOffCanvas(page), WAIT).toEqual([]);
    const aside = await page.getByRole('complementary', { name: 'Flow details' }).boundingBox();
    expect(aside!.x + aside!.width).toBeLessThanOrEqual(1024);
    expect(await sidewaysScroll(page)).toEqual({ page: false, main: false });
    // And back: the panel takes its share of the wider window again.
    await page.setViewportSize({ width: 1920, height: 1080 });
    await expect.poll(() => sidePanelWidth(page), WAIT).toBeGreaterThan(600);
    await expect.poll(() => statesOffCanvas(page), WAIT).toEqual([]);
    await page.close();
  }, 60_000);

  it('gives the side panel its share of a 1920×1080 window and remembers the width it is dragged to', async () => {
    const page = await rig().open(`/flow-editor?flow=${flowId}`, { width: 1920, height: 1080 });
    await node(page, 'lost').waitFor(WAIT);
    const opened = await sidePanelWidth(page);
    expect(opened).toBeGreaterThan(600);
    const bar = (await page.getByRole('separator', { name: 'Resize the side panel' }).boundingBox())!;
    await page.mouse.move(bar.x + bar.width / 2, bar.y + bar.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x - 100, bar.y + bar.height / 2, { steps: 8 });
    await page.mouse.up();
    const dragged = await sidePanelWidth(page);
    expect(dragged).toBeGreaterThan(opened + 80);
    await page.reload();
    await node(page, 'lost').waitFor(WAIT);
    await expect.poll(() => sidePanelWidth(page), WAIT).toBe(dragged);
    await page.close();
  }, 60_000);

  for (const size of SIZES) {
    it(`shows every screen at ${size.width}×${size.height} without sideways scrolling`, async () => {
      const name = (screen: string) => `studio-${screen}-${size.width}x${size.height}`;
      const page = await rig().open('/', size);
      await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor(WAIT);
      expect(await sidewaysScroll(page)).toEqual({ page: false, main: false });
      await screenshot(page, name('flows'));

      await page.goto(`${rig().server.url}/flow-editor?flow=${flowId}`);
      await node(page, 'lost').waitFor(WAIT);
      await expect.poll(() => statesOffCanvas(page), WAIT).toEqual([]);
      expect(await sidewaysScroll(page)).toEqual({ page: false, main: false });
      await node(page, 'playing').locator('.name').click();
      await page.getByRole('textbox', { name: 'State', exact: true }).waitFor(WAIT);
      await screenshot(page, name('editor'));
      await page.getByRole('tab', { name: 'YAML' }).click();
      await page.locator('.cm-content').waitFor(WAIT);
      await screenshot(page, name('editor-yaml'));
      await page.getByRole('tab', { name: 'Talk', exact: true }).click();
      await page.getByRole('list', { name: 'What this server can do' }).waitFor(WAIT);
      expect(await sidewaysScroll(page)).toEqual({ page: false, main: false });
      await screenshot(page, name('editor-test'));

      await page.getByRole('link', { name: 'Sessions' }).click();
      await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor(WAIT);
      expect(await sidewaysScroll(page)).toEqual({ page: false, main: false });
      await screenshot(page, name('sessions'));

      await page.getByRole('link', { name: 'Phone numbers' }).click();
      await page.getByRole('heading', { name: 'Phone numbers', level: 1 }).waitFor(WAIT);
      await page.getByRole('button', { name: 'Add number' }).click();
      await page.getByRole('form', { name: 'Add a phone number' }).waitFor(WAIT);
      expect(await sidewaysScroll(page)).toEqual({ page: false, main: false });
      await screenshot(page, name('phone-numbers'));

      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor(WAIT);
      expect(await sidewaysScroll(page)).toEqual({ page: false, main: false });
      await screenshot(page, name('settings'));
      await page.close();
    }, 90_000);
  }
});
