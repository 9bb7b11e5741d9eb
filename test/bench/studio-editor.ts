// The flow editor on a big flow, in Chromium at 1280×800 against a real server:
// - open: from navigating to /flow-editor?flow=ID until all 200 states of a generated flow are
//   drawn on the canvas (fetch, parse and validate, dagre layout with its ranks wrapped into
//   bands, edge routing, xyflow's first render); the same for 50 states;
// - re-sync: from typing one character into CodeMirror (a transition's target) until the graph
//   shows the edge moved (the analysis in the flow worker, the graph derivation, xyflow's update).
// run.ts lists this file by name beside the *.bench.ts ones; `npm run bench studio` runs it alone.
import type { Page } from 'playwright-core';
// @ts-expect-error: a plain ES module script without type declarations.
import { buildStudio, isStudioFresh } from '../../scripts/build-renderer.mjs';
import { launchChromium, tempDir, writeMicWav } from '../e2e/browser.ts';
import { signInBrowser } from '../e2e/studio.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';

const STATES = 200;
const SMALL_STATES = 50;
const OPENS = 3;
const EDITS = 5;

export async function run(): Promise<BenchRow[]> {
  const dir = await tempDir();
  // The studio as users get it: scripts/build-renderer.mjs always builds in production mode.
  if (!(await isStudioFresh())) await buildStudio();
  const server = await startTestServer();
  const chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null) });
  try {
    const account = await createAccount(server);
    const yaml = generateFlowYaml(STATES);
    const flowId = await createFlow(server, account.apiKey, 'Bench 200 states', yaml);
    const smallYaml = generateFlowYaml(SMALL_STATES);
    const smallFlowId = await createFlow(server, account.apiKey, 'Bench 50 states', smallYaml);
    const signIn = (page: Page) => signInBrowser(page, server.url, account);

    const opened: { page: Page | null } = { page: null };
    const openTimes = async (id: string, states: number): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < OPENS; i++) {
        await opened.page?.close();
        const page = (opened.page = await chromium.newPage());
        await signIn(page);
        const start = Date.now();
        await page.goto(`${server.url}/flow-editor?flow=${id}`);
        await page.waitForFunction((count) => (globalThis as any).document.querySelectorAll('.svelte-flow__node').length === count, states, { timeout: 120_000, polling: 'raf' });
        times.push(Date.now() - start);
      }
      return times;
    };
    const smallOpens = await openTimes(smallFlowId, SMALL_STATES);
    // The 200-state flow last: the re-sync below types into its page.
    const opens = await openTimes(flowId, STATES);
    const page = opened.page;

    // Re-sync: the last line is s199's transitions, `{ next199: s0, skip199: s1 } }`. With the
    // cursor after `s1`, typing 0 points skip199 at s10 and Backspace points it back at s1.
    await page!.getByRole('tab', { name: 'YAML' }).click();
    await page!.locator('.cm-content').click();
    await page!.keyboard.press('Control+End');
    for (let left = 0; left < 5; left++) await page!.keyboard.press('ArrowLeft');
    const edits: number[] = [];
    for (let i = 0; i < EDITS; i++) {
      const target = i % 2 === 0 ? 's10' : 's1';
      const before = await page!.evaluate(() => performance.now());
      if (i % 2 === 0) await page!.keyboard.type('0');
      else await page!.keyboard.press('Backspace');
      const after = await page!.waitForFunction(
        ([edge, label]) => {
          const drawn: string = (globalThis as any).document.querySelector(`.svelte-flow__edge[data-id="${edge}"]`)?.getAttribute('aria-label') ?? '';
          return drawn.endsWith(label!) ? performance.now() : false;
        },
        [`s${STATES - 1}→skip${STATES - 1}`, ` to ${target}`],
        { timeout: 60_000, polling: 'raf' },
      );
      edits.push(Number(await after.jsonValue()) - before);
    }
    if (chromium.pageErrors.length > 0) throw new Error(`the page reported errors: ${chromium.pageErrors.join(' | ')}`);

    const sortedOpens = [...opens].sort((a, b) => a - b);
    const sortedSmallOpens = [...smallOpens].sort((a, b) => a - b);
    const sortedEdits = [...edits].sort((a, b) => a - b);
    const kib = (new TextEncoder().encode(yaml).length / 1024).toFixed(0);
    return [
      {
        name: `open a ${STATES}-state flow until every state is drawn`,
        value: `${ms(percentile(sortedOpens, 50))} p50, ${ms(sortedOpens.at(-1)!)} max`,
        how: `${STATES} states / ${kib} KiB YAML, no saved layout (dagre runs); navigation → ${STATES} xyflow nodes in the DOM; ${OPENS} fresh pages, Chromium 1280×800, production build`,
      },
      {
        name: `open a ${SMALL_STATES}-state flow until every state is drawn`,
        value: `${ms(percentile(sortedSmallOpens, 50))} p50, ${ms(sortedSmallOpens.at(-1)!)} max`,
        how: `${SMALL_STATES} states / ${(new TextEncoder().encode(smallYaml).length / 1024).toFixed(0)} KiB YAML, no saved layout; as above`,
      },
      {
        name: 'YAML keystroke → graph updated',
        value: `${ms(percentile(sortedEdits, 50))} p50, ${ms(sortedEdits.at(-1)!)} max`,
        how: `one character typed into CodeMirror retargets s${STATES - 1}'s skip transition → its edge goes to the new state (page clock); ${EDITS} edits`,
      },
    ];
  } finally {
    await chromium.close();
    await server.close();
    await dir.remove();
  }
}
