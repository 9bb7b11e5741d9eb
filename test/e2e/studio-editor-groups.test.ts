// In Chromium at 1280×800: groups of states (docs/flows.md#groups) on a 200-state flow, a group per
// 20 states. Collapsing a group takes its states off the canvas and draws one node for it, the
// transitions in and out bundled with their count; the view is kept on reload. A link to a state
// inside a collapsed group, and Find, expand the group and centre the state, readable. The inspector puts a
// state in a group, and the YAML gains the key with its comments kept.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { collapsedGroupsKey } from '../../renderer/src/features/editor/graph/collapsed-groups.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { WAIT, node, openFlow, storedYaml } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();
const READABLE_PX = 11;

/** The bundled edge between two drawn ends: its label, or null when it is not drawn. */
function bundleLabel(page: Page, source: string, target: string): Promise<string | null> {
  return page.evaluate(
    ([from, to]) => {
      const label = [...(globalThis as any).document.querySelectorAll('.svelte-flow__edge-label .bundle')].find((el: any) => el.title.startsWith(`${from} → ${to}:`));
      return label ? label.textContent.trim() : null;
    },
    [source, target] as const,
  );
}

/** How `state` is seen: drawn, on screen near the canvas's middle, its name readable. */
function readableAndCentred(page: Page, state: string): Promise<string> {
  return page.evaluate(
    ([name, readable]) => {
      const g = globalThis as any;
      const doc = g.document;
      const zoom = Number(/scale\(([\d.e-]+)\)/.exec(doc.querySelector('.svelte-flow__viewport').style.transform)?.[1] ?? NaN);
      const el = doc.querySelector(`.svelte-flow__node[data-id="${name}"]`);
      if (!el) return `${name} not drawn (zoom ${zoom})`;
      const label = [...el.querySelectorAll('.name, .big-name')].find((e: any) => g.getComputedStyle(e).visibility === 'visible' && e.getClientRects().length > 0);
      const pane = doc.querySelector('.svelte-flow__pane').getBoundingClientRect();
      const box = el.getBoundingClientRect();
      const px = label ? parseFloat(g.getComputedStyle(label).fontSize) * zoom : 0;
      const off = Math.hypot(box.left + box.width / 2 - (pane.left + pane.width / 2), box.top + box.height / 2 - (pane.top + pane.height / 2));
      if (label?.textContent.trim() !== name) return `${name}'s name not shown`;
      if (px < readable) return `${name}'s name is ${px.toFixed(1)} px on screen`;
      if (off > 40) return `${name} is ${Math.round(off)} px from the middle`;
      return 'readable, centred';
    },
    [state, READABLE_PX] as const,
  );
}

describe('groups of states', () => {
  it('collapse to one node with bundled edges, open for a link into them, and are set in the inspector', async () => {
    // s150 is in no group and has a comment; every other state is in part<n> (s0–s19 part0, …).
    const yaml = generateFlowYaml(200, { groupEvery: 20 }).replace('  s150:\n    group: part7\n', '  s150:\n    # the refund question\n');
    const { page, id } = await openFlow(rig(), 'Groups 200', yaml);
    const frame = page.locator('[data-group="part0"]');
    await frame.waitFor(WAIT);
    expect(await frame.innerText()).toContain('20 states');
    await node(page, 's0').waitFor(WAIT);

    // Collapse part0: its states go, one node holds them, the transitions out of and into it are
    // bundled per pair of ends (s18 skips and s19 moves to s20: two; s19 skips to s21: one).
    await page.getByRole('button', { name: 'Collapse group part0' }).click();
    const group = node(page, 'group:part0');
    await group.waitFor(WAIT);
    await expect.poll(() => node(page, 's0').count(), WAIT).toBe(0);
    expect(await node(page, 's19').count()).toBe(0);
    expect(await group.innerText()).toMatch(/part0[\s\S]*20 states[\s\S]*Start/);
    await expect.poll(() => bundleLabel(page, 'group:part0', 's20'), WAIT).toBe('2 transitions');
    expect(await bundleLabel(page, 'group:part0', 's21')).toBe('skip19');
    expect(await page.locator('.svelte-flow__edge[data-id="s19→next19"]').count()).toBe(0);
    expect(await frame.count()).toBe(0);

    // Kept for this flow: a reload shows it collapsed still.
    await page.reload();
    await group.waitFor(WAIT);
    expect(await node(page, 's0').count()).toBe(0);

    // A link to s151, inside part7, collapsed too: part7 opens, s151 centred and readable, selected.
    await page.evaluate((key) => (globalThis as any).localStorage.setItem(key, '["part0","part7"]'), collapsedGroupsKey(id));
    await page.goto(`${rig().server.url}/flow-editor?flow=${id}&state=s151`);
    await expect.poll(() => readableAndCentred(page, 's151'), WAIT).toBe('readable, centred');
    expect(await node(page, 's151').locator('.state').getAttribute('class')).toContain('selected');
    expect(await page.locator('[data-group="part7"]').count()).toBe(1);
    expect(await node(page, 'group:part7').count()).toBe(0);
    expect(await node(page, 'group:part0').count()).toBe(1);

    // Find opens a collapsed group too: s5 is in part0.
    const find = page.getByRole('combobox', { name: 'Find a state by its name or card prompt' });
    await page.keyboard.press('Control+k');
    await find.fill('s5');
    await find.press('Enter');
    await expect.poll(() => readableAndCentred(page, 's5'), WAIT).toBe('readable, centred');
    expect(await node(page, 'group:part0').count()).toBe(0);

    // The inspector puts s150 in a new group: the YAML gains the key, its comments kept, and the
    // canvas frames it.
    await page.keyboard.press('Control+k');
    await find.fill('s150');
    await find.press('Enter');
    const inspector = page.getByRole('region', { name: 'State s150' });
    const field = inspector.getByRole('textbox', { name: 'Group' });
    await field.waitFor(WAIT);
    expect(await field.inputValue()).toBe('');
    await field.fill('refunds');
    await field.press('Enter');
    await page.locator('[data-group="refunds"]').waitFor(WAIT);
    await page.keyboard.press('Control+s');
    // The header's save status, so a failure says whether it was still saving or failed.
    await expect.poll(() => page.locator('header .status[role="status"]').innerText(), WAIT).toBe('Saved');
    const saved = await storedYaml(rig(), id);
    expect(saved.startsWith('# generated flow\n')).toBe(true);
    expect(saved).toMatch(/\n {2}s150:\n {4}# the refund question\n( {4}.*\n)*? {4}group: refunds\n {2}s151:\n {4}group: part7\n/);
    await page.close();
  }, 90_000);
});
