// Not a bench: the flow editor before and after a change, measured in the same run, turn about,
// so a machine loaded by other work weighs on both alike. Builds the studio of a given commit
// (git archive of renderer/ and server/flow/ into a temporary folder) and of the working tree,
// serves each from its own server, and for each size opens the flow and types into it as the
// studio bench does, recording the page clock and, from a Chromium trace, the main thread's CPU
// time and its longest task (wall and CPU) for each step, and the longest animation frame (as the
// studio bench counts them: opening until 1 s after the flow is on screen, the keystrokes until
// 0.5 s after the last).
//
// With --kept, each flow is opened with its layout saved with it (the positions dagre gives it, as
// a flow saved from the studio has them), so opening it lays nothing out; only opening is measured.
// With --first-screen, what a page that opens no flow pays: the flows list (the studio's first
// screen) opened fresh, its time until the list is on screen, and the CPU of the page's main thread
// and of its workers from navigation until 4 s after (a page that opens no flow should start no worker).
//
// With --cold, each open is the page's first of the editor (the page has signed in and shown the
// flows list, as a designer's first open of the day), not a reopen with the editor's code cached.
//
// --sizes=50,200 opens flows of those sizes instead of 200 and 500.
//
// With --new-flow, each open is of a flow made just before it, so the server has no view of it
// kept: a flow's first open.
//
//   npx tsx test/bench/studio-before-after.ts <commit> [rounds] [--kept | --first-screen] [--cold | --fresh] [--new-flow] [--sizes=N,N]
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, tempDir, writeMicWav } from '../e2e/browser.ts';
import { signInBrowser } from '../e2e/studio.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { analyzeFlowText } from '../../server/flow/graph/analyze.ts';
import { openAnalysed } from '../../server/flow/graph/laid-out.ts';
import { OBSERVE_FRAMES, cursorAfterS0Skip, onScreen, takeFrames, viewIds } from './studio-editor.ts';

const args = process.argv.slice(2).filter((a) => a !== '--kept' && a !== '--first-screen' && a !== '--cold' && a !== '--new-flow' && a !== '--fresh' && !a.startsWith('--sizes='));
const NEW_FLOW = process.argv.includes('--new-flow');
/** --fresh: the editor as the page's first document, as each studio bench open is (implies --cold). */
const FRESH = process.argv.includes('--fresh');
const COLD = process.argv.includes('--cold') || FRESH;
const KEPT = process.argv.includes('--kept');
const FIRST_SCREEN = process.argv.includes('--first-screen');
const commit = args[0];
if (!commit) throw new Error('usage: studio-before-after.ts <commit> [rounds] [--kept]');
const ROUNDS = Number(args[1] ?? 3);
const SIZES = process.argv.find((a) => a.startsWith('--sizes='))?.slice('--sizes='.length).split(',').map(Number) ?? [200, 500];
const root = fileURLToPath(new URL('../../', import.meta.url));

interface Step {
  wall: number;
  cpu: number;
  longestWall: number;
  longestCpu: number;
  /** CPU time of the page's dedicated workers (the flow worker), ms. */
  workerCpu: number;
}

async function buildInto(sourceRoot: string, outDir: string): Promise<void> {
  const { build } = await import('vite');
  process.env.NODE_ENV = 'production';
  await build({ configFile: join(sourceRoot, 'renderer', 'vite.config.ts'), root: join(sourceRoot, 'renderer'), logLevel: 'warn', mode: 'production', build: { outDir, emptyOutDir: true } });
}

async function traced(browser: Browser, page: Page, run: () => Promise<number>): Promise<Step> {
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  const wall = await run();
  const events = (JSON.parse((await browser.stopTracing()).toString('utf8')) as { traceEvents: Array<{ name: string; ph: string; pid: number; tid: number; dur?: number; tdur?: number; args?: { name?: string } }> }).traceEvents;
  const main = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const tasks = events.filter((e) => e.ph === 'X' && e.name === 'RunTask' && main.has(`${e.pid}:${e.tid}`) && e.dur !== undefined);
  const longest = tasks.reduce((max, t) => ((t.tdur ?? 0) > (max?.tdur ?? -1) ? t : max), tasks[0]);
  const workers = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name?.startsWith('DedicatedWorker')).map((e) => `${e.pid}:${e.tid}`));
  const workerCpu = events.filter((e) => e.ph === 'X' && e.name === 'RunTask' && workers.has(`${e.pid}:${e.tid}`)).reduce((sum, t) => sum + (t.tdur ?? 0), 0) / 1000;
  return { wall, cpu: tasks.reduce((sum, t) => sum + (t.tdur ?? 0), 0) / 1000, longestWall: (longest?.dur ?? 0) / 1000, longestCpu: (longest?.tdur ?? 0) / 1000, workerCpu };
}

const work = await mkdtemp(join(tmpdir(), 'voxflow-before-after-'));
const before = join(work, 'before');
execFileSync('sh', ['-c', `mkdir -p ${before} && git -C ${root} archive ${commit} renderer server/flow server/protocol server/providers/catalog.ts resources electron/contract.ts package.json tsconfig.base.json tsconfig.json | tar -x -C ${before}`]);
await symlink(join(root, 'node_modules'), join(before, 'node_modules'));
await buildInto(before, join(work, 'before-dist'));
await buildInto(root, join(work, 'after-dist'));

const dir = await tempDir();
const servers: Record<string, TestServer> = {
  before: await startTestServer({}, { studioDir: join(work, 'before-dist') }),
  after: await startTestServer({}, { studioDir: join(work, 'after-dist') }),
};
const chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null), full: true });
const results = new Map<string, Step[]>();
const record = (key: string, step: Step) => results.set(key, [...(results.get(key) ?? []), step]);
/** The longest animation frame of each open and of each pair of keystrokes, ms (0: none over 50 ms). */
const frames = new Map<string, number[]>();
const recordFrames = async (key: string, page: Page) => {
  const longest = Math.max(0, ...(await takeFrames(page)).map((f) => f.duration));
  frames.set(key, [...(frames.get(key) ?? []), longest]);
};
const loads: number[] = [];
try {
  const flows: Record<string, { account: Awaited<ReturnType<typeof createAccount>>; ids: Record<number, string> }> = {};
  for (const [name, server] of Object.entries(servers)) {
    const account = await createAccount(server);
    const ids: Record<number, string> = {};
    for (const states of SIZES) {
      const yaml = generateFlowYaml(states);
      ids[states] = await createFlow(server, account.apiKey, `${states} states`, yaml);
      if (!KEPT) continue;
      const positions = openAnalysed(analyzeFlowText(yaml), {}).laidOut!.positions;
      const saved = await server.request('PUT', `/v1/flows/${ids[states]}`, { apiKey: account.apiKey, body: { layout: { positions } } });
      if (saved.status !== 200) throw new Error(`saving the layout failed: ${saved.status} ${saved.text}`);
    }
    flows[name] = { account, ids };
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
      const server = servers[name]!;
      if (FIRST_SCREEN) {
        loads.push(loadavg()[0]!);
        const page = await chromium.newPage();
        await signInBrowser(page, server.url, flows[name]!.account);
        const listed = () => page.getByRole('table', { name: 'Flows' }).getByRole('link', { name: `${SIZES[0]} states`, exact: true }).waitFor();
        // Warm: the code cached, as for a designer coming back to the studio.
        await page.goto(`${server.url}/`);
        await listed();
        await page.goto('about:blank');
        record(`${name} first screen`, await traced(chromium.browser, page, async () => {
          const start = Date.now();
          await page.goto(`${server.url}/`);
          await listed();
          const wall = Date.now() - start;
          await page.waitForTimeout(4000);
          return wall;
        }));
        await page.close();
        continue;
      }
      for (const states of SIZES) {
        loads.push(loadavg()[0]!);
        const page = await chromium.newPage();
        await signInBrowser(page, server.url, flows[name]!.account);
        await page.addInitScript(OBSERVE_FRAMES);
        // No autosave: under load the first keystroke's graph can take past the autosave pause, and
        // a saved "s20" would be the next round's text, whose YAML pane has no "skip0: s2 }".
        await page.addInitScript(() => (globalThis as any).localStorage.setItem('voxflow.autosave', '0'));
        const flowId = NEW_FLOW ? await createFlow(server, flows[name]!.account.apiKey, `${states} states, round ${round}`, generateFlowYaml(states)) : flows[name]!.ids[states];
        const url = `${server.url}/flow-editor?flow=${flowId}`;
        // Warm: the code cached, as for a designer coming back to a flow. --cold: the first open
        // on a page that has only signed in.
        if (!COLD) {
          await page.goto(url);
          await onScreen(page, states, viewIds(states));
        }
        if (!FRESH) await page.goto(`${server.url}/flows`);
        if (!FRESH) await takeFrames(page);
        record(`${name} open ${states}`, await traced(chromium.browser, page, async () => {
          const start = Date.now();
          await page.goto(url);
          await onScreen(page, states, viewIds(states));
          return Date.now() - start;
        }));
        await page.waitForTimeout(1000);
        await recordFrames(`${name} open ${states}`, page);
        // A flow opened with its layout kept is measured opening only.
        if (KEPT) {
          await page.close();
          continue;
        }
        await page.waitForTimeout(500);
        await cursorAfterS0Skip(page).catch(async (error) => {
          await page.screenshot({ path: '/tmp/studio-before-after-failed.png' });
          console.log(`${name}, ${states} states: s0's line not on the YAML pane; page errors: ${chromium.pageErrors.join(' | ')}`);
          throw error;
        });
        await page.waitForTimeout(500);
        await takeFrames(page);
        for (let i = 0; i < 2; i++) {
          record(`${name} keystroke ${states}`, await traced(chromium.browser, page, async () => {
            const start = await page.evaluate(() => performance.now());
            if (i === 0) await page.keyboard.type('0');
            else await page.keyboard.press('Backspace');
            const moved = await page.waitForFunction(
              (label) => ((globalThis as any).document.querySelector('.svelte-flow__edge[data-id="s0→skip0"]')?.getAttribute('aria-label') ?? '').endsWith(label) ? performance.now() : false,
              i === 0 ? ' to s20' : ' to s2',
              { timeout: 60_000, polling: 'raf' },
            );
            const wall = Number(await moved.jsonValue()) - start;
            await page.waitForTimeout(300);
            return wall;
          }));
        }
        await page.waitForTimeout(200);
        await recordFrames(`${name} keystroke ${states}`, page);
        await page.close();
      }
    }
  }
} finally {
  await chromium.close();
  for (const server of Object.values(servers)) await server.close();
  await dir.remove();
  await rm(work, { recursive: true, force: true });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
console.log(`before = ${commit}, after = the working tree; ${KEPT ? 'layouts saved with the flows; ' : ''}${FRESH ? 'fresh pages (the editor their first document); ' : COLD ? 'cold pages; ' : ''}${ROUNDS} rounds turn about; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
if (FIRST_SCREEN) {
  console.log('first screen (the flows list) | until listed, page clock ms (before → after) | main-thread CPU ms, to 4 s after | workers\' CPU ms | longest task wall/CPU ms');
  const b = results.get('before first screen') ?? [];
  const a = results.get('after first screen') ?? [];
  const pair = (pick: (s: Step) => number) => `${median(b.map(pick)).toFixed(0)} → ${median(a.map(pick)).toFixed(0)}`;
  console.log(`medians of ${ROUNDS} | ${pair((s) => s.wall)} | ${pair((s) => s.cpu)} | ${pair((s) => s.workerCpu)} | ${median(b.map((s) => s.longestWall)).toFixed(0)}/${median(b.map((s) => s.longestCpu)).toFixed(0)} → ${median(a.map((s) => s.longestWall)).toFixed(0)}/${median(a.map((s) => s.longestCpu)).toFixed(0)}`);
  process.exit(0);
}
console.log('step               | page clock ms (before → after) | main-thread CPU ms | longest task wall/CPU ms | longest frame ms');
for (const step of SIZES.flatMap((s) => (KEPT ? [`open ${s}`] : [`open ${s}`, `keystroke ${s}`]))) {
  const b = results.get(`before ${step}`) ?? [];
  const a = results.get(`after ${step}`) ?? [];
  const pair = (pick: (s: Step) => number) => `${median(b.map(pick)).toFixed(0)} → ${median(a.map(pick)).toFixed(0)}`;
  const tasks = `${median(b.map((s) => s.longestWall)).toFixed(0)}/${median(b.map((s) => s.longestCpu)).toFixed(0)} → ${median(a.map((s) => s.longestWall)).toFixed(0)}/${median(a.map((s) => s.longestCpu)).toFixed(0)}`;
  const frame = (who: string) => median(frames.get(`${who} ${step}`) ?? [0]).toFixed(0);
  console.log(`${step.padEnd(18)} | ${pair((s) => s.wall).padEnd(30)} | ${pair((s) => s.cpu).padEnd(18)} | ${tasks.padEnd(24)} | ${frame('before')} → ${frame('after')} (median of the longest)`);
}
process.exit(0);
