// Not a bench: where the flow editor's time goes on a big flow. Builds the studio unminified
// into a temporary folder (so the profile names functions), serves it from a real server, and
// records Chromium CPU profiles (CDP Profiler) of opening a flow and of one YAML keystroke, at
// each size given (default 200 and 500 states). Prints the page's main-thread self time by
// area (parse, layout, edge routing, graph derivation, xyflow, Svelte, style and layout of the
// page) and the costliest functions, plus the longest animation frames.
//
// With --cold, each open is the page's first of the editor (as the studio bench's fresh pages),
// not a reopen with the code cached; the longest task of the open is broken down alike. With
// --first as well, the server has no view of the flow kept (the flow's first open), else it has.
// With --no-view the page's request for the view is answered 404 by the browser itself, so the
// server makes none and the editor waits for its worker (what the view costs or saves an open).
//
//   npx tsx test/bench/profile-studio.ts [states...] [--cold [--first] | --fresh] [--no-view]
//
// PROFILE_TASKS=N breaks down the open's N longest tasks instead of its three longest.
//
// --fresh (implies --cold): the editor is the page's first document, as each of the studio bench's
// opens is, so none of the studio's scripts has run (and been compiled) in that page before.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { SourceMapConsumer } from 'source-map-js';
import { launchChromium, tempDir, writeMicWav } from '../e2e/browser.ts';
import { signInBrowser } from '../e2e/studio.ts';
import { cursorAfterS0Skip, onScreen, viewIds } from './studio-editor.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';

const FRESH = process.argv.includes('--fresh');
const COLD = process.argv.includes('--cold') || FRESH;
const FIRST = process.argv.includes('--first');
const NO_VIEW = process.argv.includes('--no-view');
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const SIZES = sizes.length > 0 ? sizes : [200, 500];
const root = fileURLToPath(new URL('../../', import.meta.url));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Which part of the studio a frame belongs to, by its source file. */
const maps = new Map<string, SourceMapConsumer | null>();
/** The original source file of a frame of the built studio, through its source map. */
function originalSource(frame: ProfileNode['callFrame']): string {
  const match = /\/assets\/([^/?#]+\.js)$/.exec(frame.url);
  if (!match || frame.lineNumber < 0) return frame.url;
  let map = maps.get(match[1]!);
  if (map === undefined) {
    try {
      map = new SourceMapConsumer(JSON.parse(readFileSync(join(outDir, 'assets', `${match[1]}.map`), 'utf8')));
    } catch {
      map = null;
    }
    maps.set(match[1]!, map);
  }
  return map?.originalPositionFor({ line: frame.lineNumber + 1, column: frame.columnNumber }).source ?? frame.url;
}

function area(frame: ProfileNode['callFrame']): string {
  const { functionName } = frame;
  const url = originalSource(frame);
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)' || functionName === '(idle)' || functionName === '(root)') return functionName;
  if (url === '') return `native ${functionName}`;
  const rules: Array<[RegExp, string]> = [
    [/features\/editor\/layout/, 'layout.ts (ours)'],
    [/dagre|graphlib/, 'dagre'],
    [/edge-routes/, 'edge routing'],
    [/features\/editor\/(graph|graph-view|flow-data)\.ts/, 'graph derivation'],
    [/server\/flow|yaml/, 'parse/validate (yaml)'],
    [/@xyflow\/system/, 'xyflow system'],
    [/@xyflow\/svelte/, 'xyflow svelte'],
    [/svelte\/src|node_modules\/svelte\//, 'svelte runtime'],
    [/codemirror|@lezer/, 'codemirror'],
    [/\.svelte/, 'our components'],
    [/renderer\/src/, 'other studio code'],
  ];
  for (const [pattern, name] of rules) if (pattern.test(url)) return name;
  return url.replace(/^.*\/(node_modules\/)?/, '');
}

function summarize(label: string, profile: Profile, within: { start: number; end: number } | null = null, rows = 25): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  // Sample times in µs on the trace's clock: only those inside `within`, when given.
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (within && (at < within.start || at > within.end)) return;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, ms] of self) {
    const frame = byId.get(id)!.callFrame;
    const where = area(frame);
    if (where === '(idle)' || where === '(root)') continue;
    busy += ms;
    areas.set(where, (areas.get(where) ?? 0) + ms);
    const key = `${frame.functionName || '(anonymous)'} ${originalSource(frame).replace(/^.*\/(src|node_modules)\//, '')}`;
    functions.set(key, (functions.get(key) ?? 0) + ms);
  }
  // Inclusive time of our own functions (the studio's sources), to see what a whole step costs.
  const inclusive = new Map<string, number>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  for (const [id, ms] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const source = originalSource(frame);
      // Ours, and (within a task) Svelte Flow's components, to see which of its parts costs.
      if (!/renderer\/src|server\/flow/.test(source) && !(within && /@xyflow\/svelte\/.*\.svelte$/.test(source))) continue;
      const key = `${frame.functionName || '(anonymous)'} ${source.replace(/^.*\/(src|flow|lib)\//, '')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
    }
  }
  const wall = (profile.endTime - profile.startTime) / 1000;
  console.log(`\n## ${label}: ${wall.toFixed(0)} ms profiled, ${busy.toFixed(0)} ms busy on the page's main thread`);
  for (const [name, ms] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, Math.min(16, rows))) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${name}`);
  console.log('  our functions (inclusive):');
  for (const [name, ms] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${name}`);
  console.log('  top functions (self):');
  for (const [name, ms] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`  ${ms.toFixed(1).padStart(8)} ms  ${name}`);
}

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  /** The thread's CPU time in the event: on a loaded machine much less than `dur`. */
  tdur?: number;
  args?: { name?: string };
}

/** Main-thread time by kind of work (style, layout, paint, script), and the flow worker's busy time. */
function summarizeTrace(trace: Buffer): { text: string; longest: Array<{ start: number; end: number }> } {
  const events = (JSON.parse(trace.toString('utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
  const threads = new Map<string, string>();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args?.name ?? '');
  const kinds = ['RunTask', 'FunctionCall', 'TimerFire', 'FireAnimationFrame', 'EventDispatch', 'UpdateLayoutTree', 'Layout', 'PrePaint', 'Paint', 'Layerize', 'MinorGC', 'MajorGC', 'v8.compile', 'EvaluateScript'];
  const main = new Map<string, number>();
  let worker = 0;
  const tasks: TraceEvent[] = [];
  for (const e of events) {
    if (e.ph !== 'X' || e.dur === undefined) continue;
    const thread = threads.get(`${e.pid}:${e.tid}`);
    if (thread === 'CrRendererMain' && e.name === 'RunTask') tasks.push(e);
    if (thread === 'CrRendererMain' && kinds.includes(e.name)) main.set(e.name, (main.get(e.name) ?? 0) + e.dur / 1000);
    if (thread === 'DedicatedWorker thread' && e.name === 'RunTask') worker += e.dur / 1000;
  }
  const longest = tasks.sort((a, b) => b.dur! - a.dur!).slice(0, 4);
  const cpu = tasks.reduce((sum, t) => sum + (t.tdur ?? 0), 0) / 1000;
  const text = [
    `  trace, main thread (nested kinds overlap): ${kinds.filter((k) => main.has(k)).map((k) => `${k} ${main.get(k)!.toFixed(0)}`).join(', ')}`,
    `  trace, main thread CPU ${cpu.toFixed(0)} ms in ${tasks.length} tasks; longest tasks wall/CPU: ${longest.map((t) => `${(t.dur! / 1000).toFixed(0)}/${((t.tdur ?? 0) / 1000).toFixed(0)}`).join(', ')} ms`,
    `  trace, flow worker busy: ${worker.toFixed(0)} ms`,
  ].join('\n');
  return { text, longest: longest.slice(0, Number(process.env.PROFILE_TASKS ?? 3)).filter((t) => t.ts !== undefined).map((t) => ({ start: t.ts!, end: t.ts! + t.dur! })) };
}

async function profiled<T>(browser: Browser, page: Page, cdp: CDPSession, run: () => Promise<T>): Promise<{ result: T; profile: Profile; trace: ReturnType<typeof summarizeTrace> }> {
  // PROFILE_TRACE=0 leaves the trace out: it slows the page down by itself.
  const tracing = process.env.PROFILE_TRACE !== '0';
  if (tracing) await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'v8.execute'] });
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const result = await run();
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
  const trace = tracing ? summarizeTrace(await browser.stopTracing()) : { text: '  (no trace)', longest: [] };
  return { result, profile, trace };
}

/** Long animation frames (and long tasks) since the page started observing, longest first. */
async function longFrames(page: Page): Promise<string> {
  const frames = await page.evaluate(() => ((globalThis as any).__frames ?? []) as Array<{ kind: string; duration: number; scripts: string }>);
  const sorted = frames.filter((f) => f.kind === 'long-animation-frame').sort((a, b) => b.duration - a.duration).slice(0, 5);
  return sorted.map((f) => `\n    ${f.duration.toFixed(0)} ms: ${f.scripts}`).join('') || 'none';
}

const OBSERVE_FRAMES = () => {
  const g = globalThis as any;
  g.__frames = [];
  // Every state and transition the canvas draws while opening, counted as added to the page: more
  // than end up drawn means some were drawn and taken away again (a view before the final one).
  g.__added = { nodes: new Set(), edges: new Set() };
  new g.MutationObserver((records: any[]) => {
    for (const record of records) {
      for (const added of record.addedNodes) {
        if (added.nodeType !== 1) continue;
        for (const kind of ['node', 'edge']) {
          const seen = g.__added[`${kind}s`];
          if (added.matches(`.svelte-flow__${kind}`)) seen.add(added);
          for (const inside of added.querySelectorAll(`.svelte-flow__${kind}`)) seen.add(inside);
          if (seen.size > 0) g.__added[`first ${kind}`] ??= performance.now();
        }
      }
    }
  }).observe(g.document, { childList: true, subtree: true });
  for (const kind of ['long-animation-frame', 'longtask']) {
    try {
      new g.PerformanceObserver((list: any) => {
        for (const entry of list.getEntries()) {
          const scripts = (entry.scripts ?? [])
            .filter((x: any) => x.duration > 5)
            .map((x: any) => `${x.invoker} ${x.sourceFunctionName || ''} ${Math.round(x.duration)}`)
            .join('; ');
          g.__frames.push({ kind, duration: entry.duration, scripts });
        }
      }).observe({ type: kind, buffered: true });
    } catch {
      // This Chromium does not know the entry type.
    }
  }
};

const outDir = await mkdtemp(join(tmpdir(), 'voxflow-profile-studio-'));
const { build } = await import('vite');
process.env.NODE_ENV = 'production';
await build({
  configFile: join(root, 'renderer', 'vite.config.ts'),
  logLevel: 'warn',
  mode: 'production',
  build: { outDir, emptyOutDir: true, minify: false, sourcemap: true },
});
const dir = await tempDir();
const server = await startTestServer({}, { studioDir: outDir });
const chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null), full: true });
try {
  const account = await createAccount(server);
  for (const states of SIZES) {
    const flowId = await createFlow(server, account.apiKey, `Profile ${states}`, generateFlowYaml(states));
    const page = await chromium.newPage();
    await signInBrowser(page, server.url, account);
    await page.addInitScript(OBSERVE_FRAMES);
    // A warm-up open, so the profile is of the page as a returning designer gets it (code cached).
    page.on('console', (m) => m.type() === 'error' && console.log(`page console: ${m.text()}`));
    // Cold: the server's view of the flow made beforehand, as for a flow opened before.
    if (COLD && !FIRST) await server.request('GET', `/v1/flows/${flowId}/view`, { apiKey: account.apiKey });
    if (!COLD) {
      await page.goto(`${server.url}/flow-editor?flow=${flowId}`);
      await onScreen(page, states, viewIds(states)).catch(async (error) => {
        await page.screenshot({ path: '/tmp/profile-studio-failed.png' });
        console.log(`page errors: ${chromium.pageErrors.join(' | ')}`);
        throw error;
      });
    }
    if (!FRESH) await page.goto(`${server.url}/flows`);
    if (NO_VIEW) await page.route('**/view', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{}' }));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Profiler.enable');
    const open = await profiled(chromium.browser, page, cdp, async () => {
      const start = Date.now();
      await page.goto(`${server.url}/flow-editor?flow=${flowId}`);
      await onScreen(page, states, viewIds(states));
      return Date.now() - start;
    });
    summarize(`open ${states} states (${open.result} ms to the flow on screen)`, open.profile);
    console.log(open.trace.text);
    for (const task of open.trace.longest) summarize(`a long task of the open (${((task.end - task.start) / 1000).toFixed(0)} ms wall)`, open.profile, task, 8);
    const drawn = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const added = (globalThis as any).__added;
      // When the flow's requests came back and the canvas first drew, on the page's clock.
      const requests = (performance.getEntriesByType('resource') as unknown as Array<{ name: string; startTime: number; responseEnd: number; transferSize: number }>)
        .filter((r) => /\/v1\/flows\/[^/]+(\/(view|draft))?$/.test(r.name))
        .map((r) => `${r.name.replace(/^.*\/v1\/flows\/[^/]+/, 'flow')} ${Math.round(r.startTime)}→${Math.round(r.responseEnd)} ms (${Math.round(r.transferSize / 1024)} KiB)`);
      const timeline = `requests: ${requests.join(', ')}; first state drawn ${Math.round(added['first node'])} ms, first transition ${Math.round(added['first edge'])} ms`;
      return `${timeline}\n  ${doc.querySelectorAll('.svelte-flow__node').length} nodes, ${doc.querySelectorAll('.svelte-flow__edge').length} edges drawn (${added.nodes.size} and ${added.edges.size} added to the page while opening); ${doc.getElementsByTagName('*').length} elements in the page`;
    });
    console.log(`  ${drawn}`);
    console.log(`  long frames: ${await longFrames(page)}`);

    await cursorAfterS0Skip(page);
    await page.evaluate(() => ((globalThis as any).__frames = []));
    const edit = await profiled(chromium.browser, page, cdp, async () => {
      const before = await page.evaluate(() => performance.now());
      await page.keyboard.type('0');
      const after = await page.waitForFunction(
        (edge) => ((globalThis as any).document.querySelector(`.svelte-flow__edge[data-id="${edge}"]`)?.getAttribute('aria-label') ?? '').endsWith(' to s20') ? performance.now() : false,
        's0→skip0',
        { timeout: 20_000, polling: 'raf' },
      ).catch(async (error) => {
        await page.screenshot({ path: '/tmp/profile-studio-failed.png' });
        throw error;
      });
      const ms = Number(await after.jsonValue()) - before;
      // Let the frame after the update finish inside the profile.
      await page.waitForTimeout(300);
      return ms;
    });
    summarize(`keystroke at ${states} states (${edit.result.toFixed(0)} ms to the edge moved)`, edit.profile);
    console.log(edit.trace.text);
    console.log(`  long frames: ${await longFrames(page)}`);
    await page.close();
  }
  if (chromium.pageErrors.length > 0) console.log(`page errors: ${chromium.pageErrors.join(' | ')}`);
} finally {
  await chromium.close();
  await server.close();
  await dir.remove();
  await rm(outDir, { recursive: true, force: true });
}
process.exit(0);
