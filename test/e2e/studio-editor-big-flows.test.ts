// In Chromium: a 50-state flow laid out for reading. Its ranks wrap into bands
// side by side instead of one tall column; edges that would cross states (every move back up)
// are routed round them; no edge label sits under a state; Fit shows every state, however small
// the window; and the overview map takes the view where it is clicked, pans it when dragged and
// zooms it with the wheel.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { screenshot } from './browser.ts';
import { WAIT, centre, editorOnOnePage, node, openFlow, statesOnMap } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();
// The tests at 1280×800 open their flows on one page for the file (editorOnOnePage); the one in a
// smaller window has a page of its own.
const openOnThePage = editorOnOnePage(rig);
const FIFTY = generateFlowYaml(50);

/** Every state of the fifty on the overview map. */
const statesOnMapReady = (page: Page) => expect.poll(() => statesOnMap(page), WAIT).toBe(50);

interface Rect {
  id: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Where the states are drawn on screen, and where the edge labels are. */
function drawn(page: Page): Promise<{ nodes: Rect[]; labels: Rect[]; pane: Rect }> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const rect = (el: any, id: string) => {
      const r = el.getBoundingClientRect();
      return { id, x: r.x, y: r.y, w: r.width, h: r.height };
    };
    return {
      nodes: [...doc.querySelectorAll('.svelte-flow__node')].map((el: any) => rect(el, el.dataset.id)),
      labels: [...doc.querySelectorAll('.svelte-flow__edge-label .tool')].map((el: any) => rect(el, el.textContent.trim())),
      pane: rect(doc.querySelector('.svelte-flow__pane'), 'pane'),
    };
  });
}

/** The states' positions on the canvas (flow coordinates, zoom-independent). */
async function layoutBox(page: Page): Promise<{ width: number; height: number }> {
  const points = await page.locator('.svelte-flow__node').evaluateAll((els) =>
    els.map((el: any) => {
      const [, x, y] = /translate\(([-\d.]+)px, ?([-\d.]+)px\)/.exec(el.style.transform) ?? [];
      return { x: Number(x), y: Number(y), w: el.offsetWidth, h: el.offsetHeight };
    }),
  );
  const width = Math.max(...points.map((p) => p.x + p.w)) - Math.min(...points.map((p) => p.x));
  const height = Math.max(...points.map((p) => p.y + p.h)) - Math.min(...points.map((p) => p.y));
  return { width, height };
}

const overlaps = (a: Rect, b: Rect, by = 0) => a.x + by < b.x + b.w && b.x + by < a.x + a.w && a.y + by < b.y + b.h && b.y + by < a.y + a.h;

/** Edges (by id) that run through a state other than their own two, sampled along their drawn path. */
function edgesThroughStates(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const boxes = [...doc.querySelectorAll('.svelte-flow__node')].map((el: any) => ({ id: el.dataset.id, r: el.getBoundingClientRect() }));
    const out: string[] = [];
    for (const edge of doc.querySelectorAll('.svelte-flow__edge')) {
      const id: string = edge.getAttribute('data-id');
      const [source, tool] = id.split('→');
      const path = edge.querySelector('path.svelte-flow__edge-path');
      const matrix = path.getScreenCTM();
      const length = path.getTotalLength();
      const target = edge.getAttribute('aria-label')?.split(' to ')[1];
      for (let d = 0; d <= length; d += 6) {
        const p = new (globalThis as any).DOMPoint(path.getPointAtLength(d).x, path.getPointAtLength(d).y).matrixTransform(matrix);
        const hit = boxes.find((b) => b.id !== source && b.id !== target && p.x > b.r.left + 2 && p.x < b.r.right - 2 && p.y > b.r.top + 2 && p.y < b.r.bottom - 2);
        if (hit) {
          out.push(`${id} (${tool}) through ${hit.id}`);
          break;
        }
      }
    }
    return out;
  });
}

describe('a 50-state flow', () => {
  it('wraps its ranks into bands side by side instead of one tall column, and Auto-layout does the same', async () => {
    const { page } = await openOnThePage('Fifty states', FIFTY);
    await expect.poll(() => page.locator('.svelte-flow__node').count(), WAIT).toBe(50);
    const opened = await layoutBox(page);
    expect(opened.width / opened.height).toBeGreaterThan(0.8);
    expect(opened.width / opened.height).toBeLessThan(2.5);
    await page.getByRole('button', { name: 'Auto-layout' }).click();
    await expect.poll(async () => (await layoutBox(page)).width / (await layoutBox(page)).height, WAIT).toBeGreaterThan(0.8);
  }, 90_000);

  it('routes every edge round the states it does not join, and puts no label under a state', async () => {
    const { page } = await openOnThePage('Fifty routed', FIFTY);
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    await expect.poll(async () => (await drawn(page)).nodes.every((n) => n.w < 120), WAIT).toBe(true);
    expect(await edgesThroughStates(page)).toEqual([]);
    const { nodes, labels } = await drawn(page);
    const covered = labels.flatMap((label) => nodes.filter((n) => overlaps(label, n, 1)).map((n) => `${label.id} on ${n.id}`));
    expect(covered).toEqual([]);
    await screenshot(page, 'studio-editor-50-states-fit');
  }, 90_000);

  it('Fit shows every state in a 1024×700 window', async () => {
    const { page } = await openFlow(rig(), 'Fifty fitted', FIFTY, { width: 1024, height: 700 });
    await page.getByRole('button', { name: 'Fit', exact: true }).click();
    await expect.poll(async () => {
      const { nodes, pane } = await drawn(page);
      return nodes.filter((n) => n.x < pane.x - 1 || n.y < pane.y - 1 || n.x + n.w > pane.x + pane.w + 1 || n.y + n.h > pane.y + pane.h + 1).map((n) => n.id);
    }, WAIT).toEqual([]);
    await page.close();
  }, 90_000);

  it('goes where the overview map is clicked', async () => {
    const { page } = await openOnThePage('Fifty overview', FIFTY);
    const last = node(page, 's49');
    const inView = async () => {
      const { nodes, pane } = await drawn(page);
      const n = nodes.find((r) => r.id === 's49')!;
      return n.x >= pane.x && n.y >= pane.y && n.x + n.w <= pane.x + pane.w && n.y + n.h <= pane.y + pane.h;
    };
    // A big flow opens on its start: the last state is out of view.
    expect(await inView()).toBe(false);
    const [x, y] = await last.evaluate((el: any) => {
      const [, nx, ny] = /translate\(([-\d.]+)px, ?([-\d.]+)px\)/.exec(el.style.transform)!;
      return [Number(nx) + el.offsetWidth / 2, Number(ny) + el.offsetHeight / 2];
    });
    const onMap = await page.locator('.svelte-flow__minimap svg').evaluate((svg: any, [fx, fy]) => {
      const p = new (globalThis as any).DOMPoint(fx, fy).matrixTransform(svg.getScreenCTM());
      return { x: p.x, y: p.y };
    }, [x, y]);
    await page.mouse.click(onMap.x, onMap.y);
    await expect.poll(inView, WAIT).toBe(true);
  }, 90_000);

  it('pans the view as the overview map is dragged, and zooms it with the wheel over the map', async () => {
    const { page } = await openOnThePage('Fifty dragged', FIFTY);
    const view = () =>
      page.locator('.svelte-flow__viewport').evaluate((el: any) => {
        const [, x, y, zoom] = /translate\(([-\d.]+)px, ?([-\d.]+)px\) scale\(([-\d.e]+)\)/.exec(el.style.transform)!;
        return { x: Number(x), y: Number(y), zoom: Number(zoom) };
      });
    await statesOnMapReady(page);
    const before = await view();
    const map = await centre(page.locator('.svelte-flow__minimap svg'));
    await page.mouse.move(map.x, map.y);
    await page.mouse.down();
    await page.mouse.move(map.x + 40, map.y + 20, { steps: 8 });
    await page.mouse.up();
    // Dragged right and down on the map: the canvas shows what lies right of and below where it was.
    await expect.poll(async () => {
      const after = await view();
      return after.zoom === before.zoom && after.x < before.x - 40 && after.y < before.y - 20;
    }, WAIT).toBe(true);

    const dragged = await view();
    await page.mouse.move(map.x, map.y);
    await page.mouse.wheel(0, 300);
    await expect.poll(async () => (await view()).zoom < dragged.zoom, WAIT).toBe(true);
  }, 90_000);
});

describe('the guessing game after Auto-layout', () => {
  it('keeps every edge label visible: on the canvas, on no state', async () => {
    const { page } = await openOnThePage('Game laid out');
    // A state dragged far up and right; Auto-layout then moves every state back into a column.
    const won = await centre(node(page, 'won').locator('header'));
    await page.mouse.move(won.x, won.y);
    await page.mouse.down();
    await page.mouse.move(won.x + 200, won.y - 300, { steps: 10 });
    await page.mouse.up();
    await page.getByRole('button', { name: 'Auto-layout' }).click();
    await expect.poll(async () => {
      const { nodes, labels, pane } = await drawn(page);
      const inPane = (r: Rect) => r.x >= pane.x && r.y >= pane.y && r.x + r.w <= pane.x + pane.w && r.y + r.h <= pane.y + pane.h;
      return labels.length === 7 && labels.every((l) => l.w > 0 && inPane(l) && !nodes.some((n) => overlaps(l, n, 1))) && nodes.every(inPane);
    }, WAIT).toBe(true);
    // Every label is the topmost thing at its centre: visible, not under a state.
    const hidden = await page.locator('.svelte-flow__edge-label .tool').evaluateAll((els) =>
      els.filter((el: any) => {
        const r = el.getBoundingClientRect();
        const top = (globalThis as any).document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        return !el.contains(top);
      }).map((el: any) => el.textContent.trim()),
    );
    expect(hidden).toEqual([]);
    expect(await edgesThroughStates(page)).toEqual([]);
  }, 60_000);
});
