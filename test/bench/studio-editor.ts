// The flow editor on big flows, in Chromium at 1280×800 against a real server:
// - open: from navigating to /flow-editor?flow=ID until the flow is on screen: the overview map
//   shows every state, and the view is drawn: above 100 states the start state the view is centred
//   on, else every state (fetch, parse and validate, dagre layout with its ranks wrapped into bands, edge
//   routing, xyflow's first render). Above 100 states the canvas draws only the states in view,
//   so "every state drawn" would be a state the studio never reaches; a 50-state flow draws all;
// - re-sync: from typing one character into CodeMirror (a transition's target, in the start
//   state, which the view shows) until the graph shows the edge moved (the analysis in the flow
//   worker, the graph derivation, edge routing, xyflow's update);
// - readability on open: the zoom the view opens at, and how big the start state's name is drawn on
//   screen (its font size times the zoom, in whichever look the cards have there), beside whether
//   the start is in view: a name reads from 11 px;
// - the longest frame (long-animation-frame entries) from navigating until a second after the
//   flow is on screen, and from the first keystroke until half a second after the last; with
//   what ran in it, so a row over its target says where the time went;
// - a grouped 500-state flow (a group per 20 states) opened with every group collapsed (the
//   designer's view as the browser kept it): how long until the start's group is drawn, how many
//   nodes the canvas draws and at what zoom.
// - the floor: a bare Svelte Flow page drawing the same nodes and edges at the same positions, in a
//   canvas of the same size at the same view (studio-floor.ts), opened turn about with the studio
//   in the same Chromium, until the same signal; the 200- and 500-state rows give studio ÷ floor;
// - the same opens of a flow whose layout was saved with it (the positions dagre gives it, as a
//   flow saved from the studio has them): what opening costs without laying out, ÷ the same floor.
// Every row says the load average while it was measured: the machine is shared.
// run.ts lists this file by name beside the *.bench.ts ones; `npm run bench studio` runs it alone.
import { loadavg } from 'node:os';
import type { Page } from 'playwright-core';
// @ts-expect-error: a plain ES module script without type declarations.
import { buildStudioIfStale } from '../../scripts/build-renderer.mjs';
import { launchChromium, tempDir, writeMicWav } from '../e2e/browser.ts';
import { signInBrowser } from '../e2e/studio.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { collapsedGroupsKey } from '../../renderer/src/features/editor/graph/collapsed-groups.ts';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';
import { analyzeFlowText } from '../../server/flow/graph/analyze.ts';
import { openAnalysed } from '../../server/flow/graph/laid-out.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';
import { floorData, startFloor, studioView, type FloorServer } from './studio-floor.ts';

const OPENS = 3;
const EDITS = 6;
/**
 * The state a flow over 100 states opens on (FlowGraph centres it at the overview zoom; the canvas
 * draws what is in view at once, so it being drawn is the view being drawn).
 */
const OPENING_STATE = 's0';

/** The states whose drawing says the view is on screen: every state of a small flow, the opening one of a big one. */
export const viewIds = (states: number): string[] => (states <= 100 ? Array.from({ length: states }, (_, i) => `s${i}`) : [OPENING_STATE]);

export interface Frame {
  duration: number;
  /** The scripts that ran longest in it: "invoker function ms". */
  scripts: string;
}

/** Records long animation frames from the page's start (an init script). */
export const OBSERVE_FRAMES = () => {
  const g = globalThis as any;
  g.__benchFrames = [];
  try {
    new g.PerformanceObserver((list: any) => {
      for (const entry of list.getEntries()) {
        const scripts = [...(entry.scripts ?? [])]
          .sort((a: any, b: any) => b.duration - a.duration)
          .slice(0, 2)
          .map((s: any) => `${s.invoker}${s.sourceFunctionName ? ` ${s.sourceFunctionName}` : ''} ${Math.round(s.duration)} ms`)
          .join(', ');
        g.__benchFrames.push({ duration: entry.duration, scripts });
      }
    }).observe({ type: 'long-animation-frame', buffered: true });
  } catch {
    // Chromium before 123 has no long-animation-frame entries: the frame rows say "none".
  }
};

/** The long animation frames recorded since the last call. */
export async function takeFrames(page: Page): Promise<Frame[]> {
  return page.evaluate(() => {
    const g = globalThis as any;
    const frames = g.__benchFrames ?? [];
    g.__benchFrames = [];
    return frames;
  });
}

const longest = (frames: Frame[]): Frame | null => frames.reduce<Frame | null>((max, f) => (!max || f.duration > max.duration ? f : max), null);
const describeFrame = (frame: Frame | null) => (frame ? `${ms(frame.duration)} (${frame.scripts || 'no script attributed'})` : 'no frame over 50 ms');

/**
 * Puts CodeMirror's cursor after `s2` in s0's transitions line (`skip0: s2 } }`), by clicking
 * there: typing 0 then points skip0 at s20, and Backspace points it back at s2.
 */
export async function cursorAfterS0Skip(page: Page): Promise<void> {
  await page.getByRole('tab', { name: 'YAML' }).click();
  const line = page.locator('.cm-line', { hasText: 'skip0: s2 }' });
  const after = await line.evaluate((el) => {
    const doc = (globalThis as any).document;
    const walker = doc.createTreeWalker(el, 4);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const at = text.textContent.indexOf('s2 }');
      if (at < 0) continue;
      const range = doc.createRange();
      range.setStart(text, at + 1);
      range.setEnd(text, at + 2);
      const box = range.getBoundingClientRect();
      return { x: box.right - 1, y: box.top + box.height / 2 };
    }
    return null;
  });
  if (!after) throw new Error("s0's transitions are not on the YAML pane");
  await page.mouse.click(after.x, after.y);
}

/** The flow is on screen: every state on the overview map (when it has one), transitions and `ids` drawn. */
export function onScreen(page: Page, states: number, ids: string[]) {
  return page.waitForFunction(
    ([count, wanted]) => {
      const doc = (globalThis as any).document;
      // The overview map's shapes: one path per kind of state, a shape (`M…z`) per state; or, in a
      // studio built before that (studio-before-after's other side), xyflow's element per state.
      const paths = [...doc.querySelectorAll('.svelte-flow__minimap .overview-states')];
      const map = doc.querySelectorAll('.svelte-flow__minimap-node').length + paths.reduce((n: number, p: any) => n + (p.getAttribute('d').match(/M/g)?.length ?? 0), 0);
      if (count > 12 && map !== count) return false;
      // A big flow's transitions come a frame after its states: on screen once some are drawn.
      if (count > 12 && !doc.querySelector('.svelte-flow__edge')) return false;
      return (wanted as string[]).every((id) => {
        const node = doc.querySelector(`.svelte-flow__node[data-id="${id}"]`);
        return node && (globalThis as any).getComputedStyle(node).visibility !== 'hidden';
      });
    },
    [states, ids] as const,
    { timeout: 120_000, polling: 'raf' },
  );
}

/** How the start state is seen once the flow is on screen: the zoom, its name's size on screen, in view or not. */
export function readability(page: Page): Promise<{ zoom: number; namePx: number; inView: boolean }> {
  return page.evaluate(() => {
    const g = globalThis as any;
    const doc = g.document;
    const zoom = Number(/scale\(([\d.e-]+)\)/.exec(doc.querySelector('.svelte-flow__viewport').style.transform)?.[1] ?? NaN);
    const el = doc.querySelector('.svelte-flow__node[data-id="s0"]');
    const label = el && [...el.querySelectorAll('.name, .big-name')].find((e: any) => g.getComputedStyle(e).visibility === 'visible' && e.getClientRects().length > 0);
    const pane = doc.querySelector('.svelte-flow__pane').getBoundingClientRect();
    const box = el?.getBoundingClientRect();
    const inView = Boolean(box && box.left >= pane.left && box.top >= pane.top && box.right <= pane.right && box.bottom <= pane.bottom);
    return { zoom, namePx: label ? parseFloat(g.getComputedStyle(label).fontSize) * zoom : 0, inView };
  });
}

interface SizeResult {
  readable: { zoom: number; namePx: number; inView: boolean } | null;
  opens: number[];
  /** The floor page's opens, each right after the studio's of the same round (none at 50 states). */
  floor: number[];
  openFrames: Frame[];
  /** The floor page's long frames, counted as the studio's are (until 1 s after the flow is on screen). */
  floorFrames: Frame[];
  edits: number[];
  editFrames: Frame[];
  kib: string;
  /** The load average (1 min) before and after this size was measured. */
  load: [number, number];
}

export async function run(): Promise<BenchRow[]> {
  const dir = await tempDir();
  // The studio as users get it: scripts/build-renderer.mjs always builds in production mode.
  await buildStudioIfStale();
  const server = await startTestServer();
  const chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null), full: true });
  let floor: FloorServer | null = null;
  const load: number[] = [loadavg()[0]!];
  try {
    floor = await startFloor();
    const account = await createAccount(server);

    const measure = async (states: number, edits: boolean, withFloor: boolean, layoutKept = false): Promise<SizeResult> => {
      const loadBefore = loadavg()[0]!;
      const yaml = generateFlowYaml(states);
      const flowId = await createFlow(server, account.apiKey, `Bench ${states} states${layoutKept ? ', layout kept' : ''}`, yaml);
      if (layoutKept) {
        // The positions dagre gives the flow, saved with it as the studio's Save does.
        const positions = openAnalysed(analyzeFlowText(yaml), {}).laidOut!.positions;
        const saved = await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { layout: { positions } } });
        if (saved.status !== 200) throw new Error(`saving the layout failed: ${saved.status} ${saved.text}`);
      }
      const ids = viewIds(states);
      const opens: number[] = [];
      const floorOpens: number[] = [];
      const floorFrames: Frame[] = [];
      const openFrames: Frame[] = [];
      let readable: SizeResult['readable'] = null;
      let page: Page | null = null;
      for (let i = 0; i < OPENS; i++) {
        await page?.close();
        page = await chromium.newPage();
        await signInBrowser(page, server.url, account);
        await page.addInitScript(OBSERVE_FRAMES);
        const start = Date.now();
        await page.goto(`${server.url}/flow-editor?flow=${flowId}`);
        await onScreen(page, states, ids);
        opens.push(Date.now() - start);
        // Where the view settled (the first open; the others open the same way).
        if (i === 0) {
          await page.waitForTimeout(500);
          readable = await readability(page);
        }
        // What follows at once (the YAML pane's highlighting, measuring) is part of opening.
        await page.waitForTimeout(1000);
        openFrames.push(...(await takeFrames(page)));
        if (withFloor) {
          // The floor draws what the studio drew: its canvas's size and view are read from the first open.
          if (i === 0) await floor!.put(states, floorData(yaml, await studioView(page)));
          const bare = await chromium.newPage();
          try {
            await bare.addInitScript(OBSERVE_FRAMES);
            const start = Date.now();
            await bare.goto(floor!.url(states));
            await onScreen(bare, states, ids);
            floorOpens.push(Date.now() - start);
            await bare.waitForTimeout(1000);
            floorFrames.push(...(await takeFrames(bare)));
          } finally {
            await bare.close();
          }
        }
      }
      const result: SizeResult = {
        readable,
        opens,
        floor: floorOpens,
        openFrames,
        floorFrames,
        edits: [],
        editFrames: [],
        kib: (new TextEncoder().encode(yaml).length / 1024).toFixed(0),
        load: [loadBefore, loadBefore],
      };
      if (edits) {
        // Re-sync: s0's transitions line ends `skip0: s2 } }`. With the cursor after `s2`, typing 0
        // points skip0 at s20 and Backspace points it back at s2.
        await cursorAfterS0Skip(page!);
        await page!.waitForTimeout(500);
        await takeFrames(page!);
        for (let i = 0; i < EDITS; i++) {
          const target = i % 2 === 0 ? 's20' : 's2';
          const before = await page!.evaluate(() => performance.now());
          if (i % 2 === 0) await page!.keyboard.type('0');
          else await page!.keyboard.press('Backspace');
          const moved = await page!.waitForFunction(
            ([edge, label]) => {
              const drawn: string = (globalThis as any).document.querySelector(`.svelte-flow__edge[data-id="${edge}"]`)?.getAttribute('aria-label') ?? '';
              return drawn.endsWith(label!) ? performance.now() : false;
            },
            ['s0→skip0', ` to ${target}`],
            { timeout: 60_000, polling: 'raf' },
          );
          result.edits.push(Number(await moved.jsonValue()) - before);
          // A designer's next keystroke comes a moment later; the frames of this one finish first.
          await page!.waitForTimeout(300);
        }
        await page!.waitForTimeout(500);
        result.editFrames = await takeFrames(page!);
      }
      await page?.close();
      load.push(loadavg()[0]!);
      result.load[1] = loadavg()[0]!;
      return result;
    };

    /** The grouped 500-state flow with every group collapsed: open time, nodes drawn, zoom. */
    const measureGrouped = async (states: number, every: number) => {
      const yaml = generateFlowYaml(states, { groupEvery: every });
      const flowId = await createFlow(server, account.apiKey, `Bench ${states} states grouped`, yaml);
      const groups = Array.from({ length: Math.ceil(states / every) }, (_, i) => `part${i}`);
      const opens: number[] = [];
      let drawn = { nodes: 0, groups: 0, zoom: NaN };
      for (let i = 0; i < OPENS; i++) {
        const page = await chromium.newPage();
        await signInBrowser(page, server.url, account);
        await page.addInitScript(([key, value]) => (globalThis as any).localStorage.setItem(key, value), [collapsedGroupsKey(flowId), JSON.stringify(groups)] as const);
        const start = Date.now();
        await page.goto(`${server.url}/flow-editor?flow=${flowId}`);
        await page.locator('.svelte-flow__node[data-id="group:part0"]').waitFor({ timeout: 120_000 });
        opens.push(Date.now() - start);
        if (i === 0) {
          await page.waitForTimeout(500);
          drawn = await page.evaluate(() => {
            const doc = (globalThis as any).document;
            const transform: string = doc.querySelector('.svelte-flow__viewport').style.transform;
            return {
              nodes: doc.querySelectorAll('.svelte-flow__node').length,
              groups: doc.querySelectorAll('.svelte-flow__node-group-node').length,
              zoom: Number(/scale\(([\d.e-]+)\)/.exec(transform)?.[1] ?? NaN),
            };
          });
        }
        await page.close();
      }
      load.push(loadavg()[0]!);
      return { opens, drawn, groups: groups.length };
    };

    const small = await measure(50, false, false);
    const mid = await measure(200, true, true);
    const big = await measure(500, true, true);
    const midKept = await measure(200, false, true, true);
    const bigKept = await measure(500, false, true, true);
    const grouped = await measureGrouped(500, 20);
    if (chromium.pageErrors.length > 0) throw new Error(`the page reported errors: ${chromium.pageErrors.join(' | ')}`);

    const p50max = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return `${ms(percentile(sorted, 50))} p50, ${ms(sorted.at(-1)!)} max`;
    };
    const machine = `load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} during the run`;
    const openHow = (states: number, kib: string) =>
      `${states} states / ${kib} KiB YAML, no saved layout (dagre runs); navigation → overview map shows every state and ${states <= 100 ? 'every state is drawn' : `the start state, centred, is drawn`}; ${OPENS} fresh pages, Chromium 1280×800, production build; ${machine}`;
    const loadOf = (r: SizeResult) => `load average ${r.load[0].toFixed(1)}–${r.load[1].toFixed(1)}`;
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
    /** studio p50 ÷ floor p50, and the median of each round's own ratio (the two opened one after the other). */
    const versus = (r: SizeResult) => {
      const ratio = median(r.opens) / median(r.floor);
      const rounds = r.opens.map((o, i) => o / r.floor[i]!);
      return { ratio, text: `studio ${p50max(r.opens)}; floor ${p50max(r.floor)}; ratio ${ratio.toFixed(2)}× (rounds: ${rounds.map((x) => `${x.toFixed(2)}×`).join(', ')})` };
    };
    const floorHow =
      'floor: a bare Svelte Flow page (test/bench/studio-floor/, same @xyflow/svelte, production build) drawing the same states and transitions at the positions the studio lays out, default nodes and edges with the same names, in a canvas of the studio\'s size at the view the studio opened at, drawing only what is in view as the studio does; opened on a fresh page right after each studio open, until the same signal';
    const editHow = (states: number) => `one character typed into CodeMirror retargets s0's skip transition → its edge goes to the new state (page clock); ${EDITS} edits, ${states} states`;
    const readRow = (states: number, r: SizeResult['readable']): BenchRow => ({
      name: `readability on opening a ${states}-state flow`,
      value: r ? `zoom ${r.zoom.toFixed(2)}, s0's name ${r.namePx.toFixed(1)} px on screen, s0 ${r.inView ? 'in view' : 'out of view'}` : 'not measured',
      target: "≥ 11 px, s0 in view",
      how: "the viewport's zoom and the start state's visible name (the card's, or the large one of the names-only look) font size × zoom, once the flow is on screen and 0.5 s later; Chromium 1280×800",
    });
    return [
      readRow(200, mid.readable),
      readRow(500, big.readable),
      { name: 'open a 50-state flow', value: p50max(small.opens), target: '≤ 800 ms (as 200)', how: openHow(50, small.kib) },
      { name: 'open a 200-state flow, studio ÷ bare Svelte Flow', value: versus(mid).text, target: 'ratio ≤ 2×', how: `${openHow(200, mid.kib)}; ${floorHow}; ${loadOf(mid)}` },
      { name: 'YAML keystroke → graph updated, 200 states', value: p50max(mid.edits), target: '≤ 100 ms', how: `${editHow(200)}; ${loadOf(mid)}` },
      { name: 'open a 500-state flow, studio ÷ bare Svelte Flow', value: versus(big).text, target: 'ratio ≤ 2.5×', how: `${openHow(500, big.kib)}; ${floorHow}; ${loadOf(big)}` },
      { name: 'YAML keystroke → graph updated, 500 states', value: p50max(big.edits), target: 'none (frames below)', how: `${editHow(500)}; ${loadOf(big)}` },
      { name: 'open a 200-state flow with its layout kept, studio ÷ bare Svelte Flow', value: versus(midKept).text, target: 'none (what opening costs without laying out)', how: `${openHow(200, midKept.kib).replace('no saved layout (dagre runs)', "dagre's positions saved with the flow (no layout on open)")}; ${floorHow}; ${loadOf(midKept)}` },
      { name: 'open a 500-state flow with its layout kept, studio ÷ bare Svelte Flow', value: versus(bigKept).text, target: 'none (what opening costs without laying out)', how: `${openHow(500, bigKept.kib).replace('no saved layout (dagre runs)', "dagre's positions saved with the flow (no layout on open)")}; ${floorHow}; ${loadOf(bigKept)}` },
      {
        name: 'longest frame opening a 500-state flow with its layout kept',
        value: `${describeFrame(longest(bigKept.openFrames))}; the floor's: ${describeFrame(longest(bigKept.floorFrames))}`,
        target: '≤ 100 ms',
        how: `as "longest frame opening a 500-state flow", the layout saved with the flow; ${loadOf(bigKept)}`,
      },
      {
        name: 'open a grouped 500-state flow, every group collapsed',
        value: `${p50max(grouped.opens)}; ${grouped.drawn.nodes} nodes drawn (${grouped.drawn.groups} of them groups), zoom ${grouped.drawn.zoom.toFixed(2)}`,
        target: `none; ${grouped.groups} group nodes`,
        how: `500 states in ${grouped.groups} groups of 20 (generate-flow.ts groupEvery), every group collapsed in localStorage before opening; navigation → the start's group node drawn; ${OPENS} fresh pages; nodes counted 0.5 s later; ${machine}`,
      },
      {
        name: 'longest frame opening a 500-state flow',
        value: `${describeFrame(longest(big.openFrames))}; the floor's: ${describeFrame(longest(big.floorFrames))}`,
        target: '≤ 100 ms',
        how: `long-animation-frame entries from navigation until 1 s after the flow is on screen, ${OPENS} opens; with the scripts that ran longest in it; the floor's counted alike on its ${OPENS} opens (bare Svelte Flow draws the view and the overview map in one frame); ${loadOf(big)}`,
      },
      {
        name: 'longest frame editing a 500-state flow',
        value: describeFrame(longest(big.editFrames)),
        target: '≤ 100 ms',
        how: `long-animation-frame entries from the first keystroke until 0.5 s after the last, ${EDITS} keystrokes 0.3 s apart; ${loadOf(big)}`,
      },
      {
        name: 'longest frame editing a 200-state flow',
        value: describeFrame(longest(mid.editFrames)),
        target: '≤ 100 ms',
        how: `as above, 200 states; ${loadOf(mid)}`,
      },
    ];
  } finally {
    await chromium.close();
    await floor?.close();
    await server.close();
    await dir.remove();
  }
}
