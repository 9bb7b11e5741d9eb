// In Chromium at 1280×800: big flows a designer can read. A 200- and a 500-state flow open centred on
// their start state with its name readable (at least 11 px on screen: its font size times the zoom),
// Fit keeps it so, and the overview map draws every state big enough to see.
// studio-editor-find-and-zoom.test.ts has search, links to a state and the names-only look.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { screenshot } from './browser.ts';
import { WAIT, openFlow } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();
const READABLE_PX = 11;

/**
 * How `state` is seen: the zoom (from the viewport's transform), the on-screen size of its name as
 * drawn (the card's name, or the large name when the cards show names only), and how far its
 * centre is from the canvas's centre.
 */
function seen(page: Page, state: string) {
  return page.evaluate((name) => {
    const g = globalThis as any;
    const doc = g.document;
    const transform: string = doc.querySelector('.svelte-flow__viewport').style.transform;
    const zoom = Number(/scale\(([\d.e-]+)\)/.exec(transform)?.[1] ?? NaN);
    const el = doc.querySelector(`.svelte-flow__node[data-id="${name}"]`);
    const pane = doc.querySelector('.svelte-flow__pane').getBoundingClientRect();
    if (!el) return { zoom, drawn: false as const };
    const label = [...el.querySelectorAll('.name, .big-name')].find((e: any) => g.getComputedStyle(e).visibility === 'visible' && e.getClientRects().length > 0);
    const box = el.getBoundingClientRect();
    const onScreen = box.left >= pane.left && box.top >= pane.top && box.right <= pane.right && box.bottom <= pane.bottom;
    return {
      zoom,
      drawn: true as const,
      nameText: label?.textContent.trim() ?? null,
      namePx: label ? parseFloat(g.getComputedStyle(label).fontSize) * zoom : 0,
      onScreen,
      offCentre: Math.hypot(box.left + box.width / 2 - (pane.left + pane.width / 2), box.top + box.height / 2 - (pane.top + pane.height / 2)),
    };
  }, state);
}

/** The state is on screen, near the middle of the canvas, with its name readable. */
async function readableAndCentred(page: Page, state: string): Promise<string> {
  const s = await seen(page, state);
  if (!s.drawn) return `${state} not drawn (zoom ${s.zoom})`;
  if (!s.onScreen) return `${state} off screen (zoom ${s.zoom})`;
  if (s.nameText !== state) return `${state}'s name not shown (${s.nameText})`;
  if (s.namePx < READABLE_PX) return `${state}'s name is ${s.namePx.toFixed(1)} px on screen (zoom ${s.zoom})`;
  if (s.offCentre > 40) return `${state} is ${Math.round(s.offCentre)} px from the middle`;
  return 'readable, centred';
}

/**
 * The overview map's states as seen: how many there are, how many are at least 2 px on screen
 * (with their outline), how many stand out from the map's background (contrast ≥ 2), and how many
 * are drawn in another colour than most.
 */
function mapNodes(page: Page) {
  return page.evaluate(() => {
    const g = globalThis as any;
    const doc = g.document;
    const map = doc.querySelector('.svelte-flow__minimap');
    const svg = map?.querySelector('svg');
    if (!svg) return { count: 0, bigEnough: 0, visible: 0, apart: 0 };
    const luminance = (css: string) => {
      const [r, gr, b] = (css.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map((v: string) => {
        const c = Number(v) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * gr! + 0.0722 * b!;
    };
    const background = luminance(g.getComputedStyle(svg).backgroundColor !== 'rgba(0, 0, 0, 0)' ? g.getComputedStyle(svg).backgroundColor : g.getComputedStyle(map).backgroundColor);
    const scale = svg.getScreenCTM().a;
    // One path per kind of state, a rectangle (`M x,y h w v h h -w z`) per state.
    let count = 0;
    let bigEnough = 0;
    let visible = 0;
    const byFill = new Map<string, number>();
    for (const path of [...svg.querySelectorAll('.overview-states')] as any[]) {
      const style = g.getComputedStyle(path);
      const stroke = style.stroke === 'none' || style.stroke === 'transparent' || style.stroke === 'rgba(0, 0, 0, 0)' ? 0 : parseFloat(style.strokeWidth);
      const fill = luminance(style.fill);
      const contrast = (Math.max(fill, background) + 0.05) / (Math.min(fill, background) + 0.05);
      for (const [, w, h] of (path.getAttribute('d') as string).matchAll(/M[-\d.]+,[-\d.]+h([-\d.]+)v([-\d.]+)/g)) {
        count++;
        if ((Math.min(Math.abs(Number(w)), Math.abs(Number(h))) + stroke) * scale >= 2) bigEnough++;
        if (contrast >= 2) visible++;
        byFill.set(style.fill, (byFill.get(style.fill) ?? 0) + 1);
      }
    }
    // The states drawn in another colour than most (the start, in the accent colour).
    const apart = count - Math.max(0, ...byFill.values());
    return { count, bigEnough, visible, apart };
  });
}

for (const states of [200, 500]) {
  describe(`a ${states}-state flow`, () => {
    it('opens centred on its start with the name readable, keeps it so on Fit, and draws every state on the overview map', async () => {
      const { page } = await openFlow(rig(), `Readable ${states}`, generateFlowYaml(states));
      await expect.poll(() => readableAndCentred(page, 's0'), WAIT).toBe('readable, centred');

      // Every state, big enough to see and standing out from the map; the start in a colour of its own.
      await expect.poll(() => mapNodes(page), WAIT).toEqual({ count: states, bigEnough: states, visible: states, apart: 1 });
      await screenshot(page, `studio-editor-readable-${states}`);

      // Fit on a flow this big stays where names read, round the start (nothing is selected).
      await page.getByRole('button', { name: 'Fit', exact: true }).click();
      await page.waitForTimeout(600);
      await expect.poll(() => readableAndCentred(page, 's0'), WAIT).toBe('readable, centred');
      await page.close();
    }, 90_000);
  });
}
