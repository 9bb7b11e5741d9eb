// In Chromium at 1280×800: finding one's way in a big flow. Ctrl+K (or Ctrl+F in the canvas) finds a
// state by a word of its card prompt and centres it, readable (its name at least 11 px on screen)
// and selected; a link to a state opens the flow centred on it. Zoomed out past where a card's text
// reads, the cards show their name alone, large, and the coverage marks stay visible.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { createFlow } from '../support/server.ts';
import { WAIT, node, openFlow } from './studio-editor-page.ts';
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

describe('finding a state', () => {
  it('Ctrl+K finds a state by a word of its card prompt, centres it readable and selects it', async () => {
    const { page } = await openFlow(rig(), 'Find in 200', generateFlowYaml(200));
    await expect.poll(() => readableAndCentred(page, 's0'), WAIT).toBe('readable, centred');
    await page.locator('.svelte-flow__pane').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('Control+k');
    const box = page.getByRole('combobox', { name: 'Find a state by its name or card prompt' });
    await box.waitFor(WAIT);
    // The card prompt of s173 is "Step 173: {a173}".
    await box.fill('step 173:');
    const found = page.getByRole('listbox', { name: 'States found' }).getByRole('option');
    await expect.poll(() => found.allInnerTexts(), WAIT).toEqual([expect.stringContaining('s173')]);
    await box.press('Enter');
    await expect.poll(() => readableAndCentred(page, 's173'), WAIT).toBe('readable, centred');
    expect(await node(page, 's173').locator('.state').getAttribute('class')).toContain('selected');
    expect(await box.count()).toBe(0);

    // Ctrl+F in the canvas opens it too; a word nothing has says so; Escape closes it.
    await node(page, 's173').focus();
    await page.keyboard.press('Control+f');
    await box.fill('zebra');
    expect(await page.getByRole('search', { name: 'Find a state' }).getByRole('status').innerText()).toContain('No state has “zebra”');
    await box.press('Escape');
    expect(await box.count()).toBe(0);
    await page.close();
  }, 90_000);

  it('a link to a state opens the flow centred on it, readable and selected', async () => {
    const id = await createFlow(rig().server, rig().account.apiKey, 'Linked 200', generateFlowYaml(200));
    const page = await rig().open(`/flow-editor?flow=${id}&state=s150`);
    await expect.poll(() => readableAndCentred(page, 's150'), WAIT).toBe('readable, centred');
    expect(await node(page, 's150').locator('.state').getAttribute('class')).toContain('selected');
    await page.close();
  }, 90_000);
});

describe('zoomed out', () => {
  it('cards show their name alone, large and readable, with the coverage marks still on them', async () => {
    const { page, id } = await openFlow(rig(), 'Zoomed out', generateFlowYaml(30));
    const suite = 'tests:\n  - name: first step\n    steps:\n      - simulate: {tool: next0}\n        expect: {state: s1}\n';
    const imported = await rig().server.request('POST', `/v1/flows/${id}/tests/import`, { apiKey: rig().account.apiKey, body: { yaml_content: suite } });
    expect(imported.status).toBe(201);
    await page.getByRole('tab', { name: 'Tests' }).click();
    const panel = page.getByRole('region', { name: 'Flow tests' });
    await panel.getByRole('button', { name: 'Run all' }).click();
    await expect.poll(() => panel.getByRole('status').textContent(), WAIT).toBe('1 of 1 passed');
    await expect.poll(() => page.locator('.state.untested').count(), WAIT).toBeGreaterThan(0);

    // Close in: each card shows its prompt and its tools.
    for (let i = 0; i < 6 && (await page.locator('.canvas[data-detail]').getAttribute('data-detail')) !== 'cards'; i++) {
      await page.getByRole('button', { name: 'Zoom In' }).click();
      await page.waitForTimeout(300);
    }
    await expect.poll(() => page.locator('.canvas[data-detail]').getAttribute('data-detail'), WAIT).toBe('cards');
    expect(await node(page, 's2').locator('.excerpt').isVisible()).toBe(true);

    // Zoomed out: names only, large enough to read, and s2 still painted as no test reaching it.
    for (let i = 0; i < 4; i++) await page.getByRole('button', { name: 'Zoom Out' }).click();
    await expect.poll(() => page.locator('.canvas[data-detail]').getAttribute('data-detail'), WAIT).toBe('names');
    const s2 = node(page, 's2');
    expect(await s2.locator('.excerpt').isVisible()).toBe(false);
    expect(await s2.locator('.chips').isVisible()).toBe(false);
    const look = await s2.evaluate((el: any) => {
      const g = globalThis as any;
      const zoom = Number(/scale\(([\d.e-]+)\)/.exec(g.document.querySelector('.svelte-flow__viewport').style.transform)![1]);
      const big = el.querySelector('.big-name');
      const card = g.getComputedStyle(el.querySelector('.state'));
      return {
        name: big.textContent.trim(),
        namePx: parseFloat(g.getComputedStyle(big).fontSize) * zoom,
        outline: card.outlineStyle,
        outlinePx: parseFloat(card.outlineWidth) * zoom,
      };
    });
    expect(look.name).toBe('s2');
    expect(look.namePx).toBeGreaterThanOrEqual(READABLE_PX);
    expect(look.outline).toBe('dotted');
    expect(look.outlinePx).toBeGreaterThanOrEqual(2);
    // The start is marked, and a state the test reaches is not painted untested.
    expect(await node(page, 's0').locator('.big-marks').innerText()).toContain('Start');
    expect(await node(page, 's1').evaluate((el: any) => (globalThis as any).getComputedStyle(el.querySelector('.state')).outlineStyle)).not.toBe('dotted');
    await page.close();
  }, 90_000);
});
