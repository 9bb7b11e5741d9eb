// What the flow editor's browser tests share: opening a flow in the editor, and reading the canvas
// the way a designer sees it (states by name, edge labels, where the keyboard focus is).
import type { Locator, Page } from 'playwright-core';
import { GUESSING_GAME_YAML, createFlow } from '../support/server.ts';
import { keptPage, type StudioRig } from './studio.ts';

export const WAIT = { timeout: 20_000 };

/** Creates a flow over the API and opens it in the editor, once its states are drawn. */
export async function openFlow(
  rig: StudioRig,
  name: string,
  yaml = GUESSING_GAME_YAML,
  viewport?: { width: number; height: number },
): Promise<{ page: Page; id: string }> {
  const id = await createFlow(rig.server, rig.account.apiKey, name, yaml);
  const page = await rig.open(`/flow-editor?flow=${id}`, viewport);
  await page.locator('.svelte-flow__node').first().waitFor(WAIT);
  return { page, id };
}

/**
 * For editor tests that each open a flow of their own, on one page (keptPage): the first opens a
 * page at its flow (openFlow); each later one creates its flow and goes to it as a designer does,
 * through the sidebar's Flows (the last test's unsaved changes thrown away when the studio asks)
 * and the flow's row. A page's renderer pays 0.4 s of CPU to open a flow in the editor from
 * nothing, 0.15 s to open the next one from the sidebar. Tests leave the page open.
 */
export function editorOnOnePage(rig: () => StudioRig): (name: string, yaml?: string) => Promise<{ page: Page; id: string }> {
  const openOnThePage = keptPage<[id: string, name: string], { page: Page; id: string }>({
    async reach(page, id, name) {
      await page.getByRole('navigation', { name: 'Studio' }).getByRole('link', { name: 'Flows', exact: true }).click({ timeout: 5_000 });
      await page.getByRole('table', { name: 'Flows' }).getByRole('link', { name, exact: true }).click({ timeout: 10_000 });
      await page.waitForURL((url) => url.searchParams.get('flow') === id, WAIT);
      await page.locator('.svelte-flow__node').first().waitFor(WAIT);
      return { page, id };
    },
    async fresh(id) {
      const page = await rig().open(`/flow-editor?flow=${id}`);
      await page.locator('.svelte-flow__node').first().waitFor(WAIT);
      return { page, value: { page, id } };
    },
  });
  return async (name, yaml = GUESSING_GAME_YAML) => openOnThePage(await createFlow(rig().server, rig().account.apiKey, name, yaml), name);
}

/**
 * Zooms in with the canvas's own control until cards show their details: a flow fitted whole into
 * the window may open below the zoom where a card's text reads, where cards show names only.
 */
export async function showCards(page: Page): Promise<void> {
  const detail = () => page.locator('.canvas[data-detail]').getAttribute('data-detail');
  for (let i = 0; i < 8 && (await detail()) !== 'cards'; i++) {
    await page.getByRole('button', { name: 'Zoom In' }).click();
    await page.waitForTimeout(200);
  }
  if ((await detail()) !== 'cards') throw new Error('the canvas still shows names only after zooming in 8 times');
}

export const node = (page: Page, state: string): Locator => page.locator(`.svelte-flow__node[data-id="${state}"]`);
/** How many states the overview map draws: its paths hold one shape (`M…z`) per state. */
export const statesOnMap = (page: Page): Promise<number> =>
  page.evaluate(() =>
    [...(globalThis as any).document.querySelectorAll('.svelte-flow__minimap .overview-states')].reduce((n: number, path: any) => n + (path.getAttribute('d').match(/M/g)?.length ?? 0), 0),
  );
export const nodeNames = (page: Page): Promise<string[]> => page.locator('.svelte-flow__node .name').allTextContents();

/** The tool names on the edges (a self-loop's label starts with ↻). */
export async function edgeLabels(page: Page): Promise<string[]> {
  return (await page.locator('.svelte-flow__edge-label .tool').allTextContents()).map((t) => t.replace('↻', '').replace(/×\d+/, '').trim());
}

/**
 * The flow as the studio's Save stores it: its draft (docs/flows.md#drafts), or the live text while
 * it has none.
 */
export async function storedYaml(rig: StudioRig, id: string): Promise<string> {
  const stored = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
  return stored.body.yaml_content as string;
}

/** What has the keyboard focus: its tag, accessible name or label, and the state node it is in. */
export function focused(page: Page): Promise<{ tag: string; label: string; value: string | null; state: string | null; inInspector: boolean }> {
  return page.evaluate(() => {
    const el = (globalThis as any).document.activeElement;
    const label =
      el?.getAttribute?.('aria-label') ??
      el?.closest?.('label')?.querySelector('span')?.textContent ??
      el?.textContent?.trim() ??
      '';
    return {
      tag: el?.tagName?.toLowerCase() ?? 'none',
      label,
      value: 'value' in (el ?? {}) && typeof el.value === 'string' ? el.value : null,
      state: el?.closest?.('.svelte-flow__node')?.getAttribute('data-id') ?? null,
      inInspector: Boolean(el?.closest?.('.inspector')),
    };
  });
}

export async function centre(locator: Locator): Promise<{ x: number; y: number }> {
  const box = (await locator.boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}
