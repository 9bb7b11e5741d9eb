// In Chromium: a 200-state flow draws only the states in view (above 100 states
// the canvas does), yet shows every state on the overview map, runs its edges from the bottom of
// the states they leave into the top of the states they enter, drawn or not yet drawn, and draws
// the states that come into view. Saved with a layout, it reopens with every state where it was
// saved (a state added since placed beside the others) and its edges routed there. Its canvas is
// drawn from the server's view of the flow while the flow worker has not even loaded, read-only
// until the worker's answer lands, and a keystroke typed meanwhile is kept.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { analyzeFlowText } from '../../server/flow/graph/analyze.ts';
import { openAnalysed } from '../../server/flow/graph/laid-out.ts';
import type { Positions } from '../../server/flow/graph/layout.ts';
import { createFlow } from '../support/server.ts';
import { cursorAfterS0Skip } from '../bench/studio-editor.ts';
import { signInBrowser, turnOffAutosave } from './studio.ts';
import { WAIT, node, openFlow, statesOnMap } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();

/**
 * Holds back the page's requests matching `url` until release(), then lets them go on (`continue`)
 * or fails them (`abort`). Release it in a finally: a request held past the test keeps its page.
 */
async function holdBack(page: Page, url: string | RegExp, then: 'continue' | 'abort') {
  let asked = false;
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(url, async (route) => {
    asked = true;
    await held;
    await (then === 'continue' ? route.continue() : route.abort());
  });
  return { asked: () => asked, release: () => release() };
}
const TWO_HUNDRED = generateFlowYaml(200);

/** On screen: where an edge's path starts and ends, and the boxes of its two states. */
function edgeEnds(page: Page, id: string, source: string, target: string) {
  return page.evaluate(
    ([edgeId, from, to]) => {
      const doc = (globalThis as any).document;
      const path = doc.querySelector(`.svelte-flow__edge[data-id="${edgeId}"] path.svelte-flow__edge-path`);
      if (!path) return null;
      const matrix = path.getScreenCTM();
      const at = (length: number) => {
        const p = path.getPointAtLength(length);
        const s = new (globalThis as any).DOMPoint(p.x, p.y).matrixTransform(matrix);
        return { x: s.x, y: s.y };
      };
      const box = (name: string) => {
        const r = doc.querySelector(`.svelte-flow__node[data-id="${name}"] .state`)?.getBoundingClientRect();
        return r ? { left: r.left, right: r.right, top: r.top, bottom: r.bottom } : null;
      };
      const source = box(from!);
      const zoom = source ? (source.right - source.left) / 240 : 1;
      return { start: at(0), end: at(path.getTotalLength()), source, target: box(to!), zoom };
    },
    [id, source, target],
  );
}

/** s0 → s1 (next0) goes down from s0's bottom into s1's top, once both are drawn and measured. */
async function leavesS0IntoS1(page: Page): Promise<void> {
  await expect
    .poll(async () => {
      const ends = await edgeEnds(page, 's0→next0', 's0', 's1');
      if (!ends?.source || !ends.target) return 'not drawn';
      const centreOf = (b: { left: number; right: number }) => (b.left + b.right) / 2;
      const near = (a: number, b: number, by: number) => Math.abs(a - b) <= by;
      return [
        // The connector dot sits on the bottom border (1.5 px) and is 14 px tall: the edge leaves
        // 5.5 px below the border, at the canvas's zoom.
        near(ends.start.x, centreOf(ends.source), 2) && near(ends.start.y, ends.source.bottom + 5.5 * ends.zoom, 1.5)
          ? 'leaves s0 at its bottom'
          : `leaves at ${JSON.stringify(ends.start)} of ${JSON.stringify(ends.source)}`,
        near(ends.end.x, centreOf(ends.target), 2) && near(ends.end.y, ends.target.top + 1.5 * ends.zoom, 1.5) ? 'enters s1 at its top' : `enters at ${JSON.stringify(ends.end)} of ${JSON.stringify(ends.target)}`,
      ];
    }, WAIT)
    .toEqual(['leaves s0 at its bottom', 'enters s1 at its top']);
}

describe('a 200-state flow', () => {
  it('draws the states in view, with every state on the overview map and edges from bottom to top of their states', async () => {
    const { page } = await openFlow(rig(), 'Two hundred states', TWO_HUNDRED);
    await expect.poll(() => statesOnMap(page), WAIT).toBe(200);
    await node(page, 's0').waitFor(WAIT);
    const drawnAtOpen = await page.locator('.svelte-flow__node').count();
    expect(drawnAtOpen).toBeGreaterThan(0);
    expect(drawnAtOpen).toBeLessThan(100);

    await leavesS0IntoS1(page);

    // Zoomed out, the states that come into view are drawn. (Fit on a flow this big stays where
    // names read: studio-editor-readable.test.ts.)
    for (let i = 0; i < 5; i++) await page.getByRole('button', { name: 'Zoom Out' }).click();
    await expect.poll(() => page.locator('.svelte-flow__node').count(), WAIT).toBeGreaterThan(drawnAtOpen * 2);
    await page.close();
  }, 120_000);

  it('saved with a layout, reopens with every state where it was saved and its edges routed there', async () => {
    // dagre's layout moved down and right, as a designer's own would be, without s7 (added since).
    const dagre = openAnalysed(analyzeFlowText(TWO_HUNDRED), {}).laidOut!.positions;
    const saved: Positions = {};
    for (const [name, at] of Object.entries(dagre)) if (name !== 's7') saved[name] = { x: at.x + 400, y: at.y + 300 };
    const id = await createFlow(rig().server, rig().account.apiKey, 'Two hundred states, laid out', TWO_HUNDRED);
    const put = await rig().server.request('PUT', `/v1/flows/${id}`, { apiKey: rig().account.apiKey, body: { layout: { positions: saved } } });
    expect(put.status).toBe(200);
    const page = await rig().open(`/flow-editor?flow=${id}`);
    try {
      await expect.poll(() => statesOnMap(page), WAIT).toBe(200);
      const at = (state: string) => node(page, state).evaluate((el) => /translate\(([-\d.]+)px, ?([-\d.]+)px\)/.exec((el as any).style.transform)?.slice(1).map(Number));
      await node(page, 's0').waitFor(WAIT);
      expect(await at('s0')).toEqual([saved.s0!.x, saved.s0!.y]);
      await leavesS0IntoS1(page);
      // Nothing was moved by opening it: the flow is as saved.
      expect(await page.locator('header .status[role="status"]').innerText()).toBe('Saved');
    } finally {
      await page.close();
    }
  }, 120_000);

  it("is drawn from the server's view before the flow worker has loaded, read-only until it answers, and keeps what was typed meanwhile", async () => {
    const id = await createFlow(rig().server, rig().account.apiKey, 'Two hundred states, drawn early', TWO_HUNDRED);
    // Opened before: the server keeps its view, so it answers at once.
    expect((await rig().server.request('GET', `/v1/flows/${id}/view`, { apiKey: rig().account.apiKey })).status).toBe(200);
    const page = await rig().chromium.newPage();
    let release = () => {};
    try {
      await signInBrowser(page, rig().server.url, rig().account);
      await turnOffAutosave(page);
      // The flow worker's script is held back: nothing on the page can parse or lay out the flow.
      const worker = await holdBack(page, /flow-worker[^/]*\.js(\?.*)?$/, 'continue');
      release = worker.release;
      await page.goto(`${rig().server.url}/flow-editor?flow=${id}`);
      await expect.poll(() => statesOnMap(page), WAIT).toBe(200);
      await node(page, 's0').waitFor(WAIT);
      expect(worker.asked()).toBe(true);
      await leavesS0IntoS1(page);
      // Read-only meanwhile: no adding states or laying out again.
      expect(await page.getByRole('button', { name: '+ State' }).count()).toBe(0);
      const at = (state: string) => node(page, state).evaluate((el) => (el as any).style.transform as string);
      const s0Before = await at('s0');

      // A keystroke in the YAML while the worker is held: skip0 is sent to s20 instead of s2.
      await cursorAfterS0Skip(page);
      await page.keyboard.type('0');
      release();
      const skipLabel = () => page.locator('.svelte-flow__edge[data-id="s0→skip0"]').getAttribute('aria-label');
      await expect.poll(skipLabel, WAIT).toMatch(/ to s20$/);
      await page.getByRole('button', { name: '+ State' }).waitFor(WAIT);
      // The worker's answer drew the same picture: nothing moved.
      expect(await at('s0')).toBe(s0Before);
      expect(await page.locator('header .status[role="status"]').innerText()).not.toBe('Saved');
    } finally {
      release();
      await page.close();
    }
  }, 120_000);

  it("opens with its own flow worker when the server's view does not come (a server busy with calls)", async () => {
    const id = await createFlow(rig().server, rig().account.apiKey, 'Two hundred states, no view', TWO_HUNDRED);
    const page = await rig().chromium.newPage();
    let release = () => {};
    try {
      await signInBrowser(page, rig().server.url, rig().account);
      // The studio is on the server's machine (loopback), so it waits for the view first; the view
      // is held back until the end of the test.
      const view = await holdBack(page, '**/v1/flows/*/view', 'abort');
      release = view.release;
      await page.goto(`${rig().server.url}/flow-editor?flow=${id}`);
      await expect.poll(() => statesOnMap(page), WAIT).toBe(200);
      await node(page, 's0').waitFor(WAIT);
      expect(view.asked()).toBe(true);
      await leavesS0IntoS1(page);
      // Drawn from the worker's own answer: editable, not a preview.
      await page.getByRole('button', { name: '+ State' }).waitFor(WAIT);
    } finally {
      release();
      await page.close();
    }
  }, 120_000);
});
