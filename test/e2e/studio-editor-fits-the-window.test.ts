// The editor's header and its Tests tab at the window sizes designers use, in Chromium against a
// real server: at 1280×800 the Tests tab with failed tests stays inside the window (nothing to
// scroll sideways, its buttons whole); the header's name, status and commands never overlap at
// 1024, 1280 or 1920 wide, and the live/draft line is whole at 1280.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot } from './browser.ts';
import { openFlow, WAIT } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

/** A test the guessing game fails (it stays in setup without a model to call begin_game). */
const FAILING_TEST = (name: string) => `name: ${name}
steps:
  - user: "I'm ready, let us play the game now please"
    expect:
      tool_called: {name: begin_game}
      state: playing
`;

interface Box {
  name: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** The header's parts a designer reads or clicks, each with its box. */
function headerParts(page: Page): Promise<Box[]> {
  return page.evaluate(() => {
    const header = (globalThis as any).document.querySelector('main header');
    const parts: any[] = [...header.querySelectorAll(':scope > button, :scope > h1 input, .status, [data-testid="live-state"], .commands > button')];
    return parts.map((element): Box => {
      const box = element.getBoundingClientRect();
      const name = element.getAttribute('aria-label') ?? element.textContent?.trim() ?? element.tagName;
      return { name, left: box.left, right: box.right, top: box.top, bottom: box.bottom };
    });
  });
}

const overlaps = (a: Box, b: Box) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;

describe('the editor fits the window', () => {
  const rig = studioSuite();

  it('keeps the Tests tab with failed tests inside 1280×800, its buttons whole', { timeout: 45_000 }, async () => {
    const { page, id } = await openFlow(rig(), 'Tested flow');
    for (const name of ['the game starts when the caller says they are ready to play', 'the game starts again']) {
      const created = await rig().server.request('POST', `/v1/flows/${id}/tests`, { apiKey: rig().account.apiKey, body: { yaml_content: FAILING_TEST(name) } });
      expect(created.status).toBe(201);
    }
    await page.getByRole('tab', { name: 'Tests' }).click();
    const panel = page.getByRole('region', { name: 'Flow tests' });
    await panel.getByRole('button', { name: 'Run all' }).click();
    await panel.getByRole('status').filter({ hasText: '0 of 2 passed' }).waitFor(WAIT);
    await screenshot(page, 'tests-tab-1280');

    const widths = await page.evaluate(() => {
      const { documentElement, body } = (globalThis as any).document;
      const main = body.querySelector('main');
      return { document: [documentElement.scrollWidth, documentElement.clientWidth], main: [main.scrollWidth, main.clientWidth] };
    });
    expect(widths.document[0]).toBe(widths.document[1]);
    expect(widths.main[0]).toBe(widths.main[1]);
    for (const locator of [panel.getByRole('button', { name: 'Run all' }), panel.getByRole('button', { name: 'Export' }), panel.getByRole('status')]) {
      const box = (await locator.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(1280);
      // One line: the words are not wrapped, nor cut.
      expect(await locator.evaluate((element) => element.scrollWidth <= element.clientWidth && element.getClientRects().length === 1)).toBe(true);
      expect(box.height).toBeLessThan(40);
    }
    await page.close();
  });

  it('never overlaps the header’s parts at 1024, 1280 and 1920, and shows the live/draft line whole at 1280', { timeout: 45_000 }, async () => {
    const { page, id } = await openFlow(rig(), 'Guessing game');
    // A saved draft, so the line is its longest: "Live: v1 · Draft: unpublished changes".
    const yaml = (await rig().server.request('GET', `/v1/flows/${id}`, { apiKey: rig().account.apiKey })).body.yaml_content as string;
    await rig().server.request('PUT', `/v1/flows/${id}/draft`, { apiKey: rig().account.apiKey, body: { yaml_content: `${yaml}\n# a draft\n` } });
    await page.reload();
    const live = page.getByTestId('live-state');
    await expect.poll(() => live.textContent(), WAIT).toBe('Live: v1 · Draft: unpublished changes');

    for (const width of [1920, 1280, 1024]) {
      await page.setViewportSize({ width, height: 800 });
      await page.waitForTimeout(200);
      await screenshot(page, `editor-header-${width}`);
      const parts = await headerParts(page);
      expect(parts.map((p) => p.name)).toEqual(expect.arrayContaining(['Flow name', 'Saved', 'Undo', 'Redo', 'Save', 'Publish…']));
      for (const [i, a] of parts.entries()) {
        expect(a.right, `${a.name} at ${width}`).toBeLessThanOrEqual(width);
        for (const b of parts.slice(i + 1)) expect(overlaps(a, b), `${a.name} and ${b.name} at ${width}`).toBe(false);
      }
      if (width >= 1280) {
        // Whole: nothing cut off with an ellipsis, the status or the flow's name.
        for (const text of [live, page.getByRole('status').filter({ hasText: 'Saved' }), page.getByLabel('Flow name')]) {
          expect(await text.evaluate((element) => element.scrollWidth <= element.clientWidth), `at ${width}`).toBe(true);
        }
      }
    }
    await page.close();
  });
});
