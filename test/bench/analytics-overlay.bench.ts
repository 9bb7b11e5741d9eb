// `npm run bench -- analytics` (with analytics.bench.ts): the studio's Traffic overlay on a
// 200-state flow, in Chromium at 1280×800 against a real server (target: drawn ≤ 200 ms after the
// counts arrive). 400 calls walk the flow from s0 along its next/skip tools for 1 to 200 moves,
// stored through the store as the transports and the timeline recorder leave them, so every state
// and link has counts. Each run switches the overlay on and times, on the page's clock, from the
// answer of GET /v1/analytics/flows/{id} reaching the page (fetch resolving) until every state
// card drawn shows its traffic marks and the links drawn show their counts; then switches it off.
import { availableParallelism, loadavg } from 'node:os';
import type { Page } from 'playwright-core';
// @ts-expect-error: a plain ES module script without type declarations.
import { buildStudioIfStale } from '../../scripts/build-renderer.mjs';
import { launchChromium, tempDir, writeMicWav } from '../e2e/browser.ts';
import { signInBrowser } from '../e2e/studio.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';
import { OBSERVE_FRAMES, onScreen, takeFrames, type Frame } from './studio-editor.ts';

const STATES = 200;
const CALLS = 400;
const RUNS = 7;
const load = () => `load average ${loadavg().map((n) => n.toFixed(1)).join(' / ')} (1 / 5 / 15 min) on ${availableParallelism()} cores`;

/** Records when the page receives the traffic counts (an init script). */
const OBSERVE_TRAFFIC = () => {
  const g = globalThis as any;
  const fetch = g.fetch.bind(g);
  g.fetch = async (...args: any[]) => {
    const response = await fetch(...args);
    if (/\/v1\/analytics\/flows\/[^/?]+(\?|$)/.test(String(args[0]?.url ?? args[0]))) g.__trafficArrived = performance.now();
    return response;
  };
};

/** The calls: each walks from s0 by next (one on) or skip (two on) for 1 to 200 moves, and ends. */
async function storeCalls(server: TestServer, accountId: string, flowId: string): Promise<void> {
  const store = server.app.services.store;
  for (let n = 0; n < CALLS; n++) {
    const session = await store.sessions.createConnected({ accountId, flowId, transport: 'websocket', mode: 'flow', context: {}, metadata: {}, flowVersion: 1 });
    const events: Array<Record<string, unknown>> = [{ type: 'flow_state', state: 's0', prompt: '', artifact_type: 'card', variables: {}, tools: [] }];
    let at = 0;
    for (let k = 0, moves = 1 + ((n * 37) % STATES); k < moves; k++) {
      const skip = (n + k) % 3 === 0;
      const to = (at + (skip ? 2 : 1)) % STATES;
      events.push({ type: 'tool_call', name: `${skip ? 'skip' : 'next'}${at}`, arguments: {}, status: 'accepted', reason: null, from_state: `s${at}`, to_state: `s${to}`, source: 'model' });
      events.push({ type: 'flow_state', state: `s${to}`, prompt: '', artifact_type: 'card', variables: {}, tools: [] });
      at = to;
    }
    const now = Date.now() / 1000;
    const entries = events.map((event, i) => ({ seq: i + 1, at: now + i / 1000, type: String(event.type), data: JSON.stringify(event) }));
    await store.timelines.append(session.id, entries, { events: entries.length, bytes: entries.length * 100, dropped: 0 });
    await store.sessions.end(session.id, { endedAt: now + 60, reason: ['caller_hung_up', 'flow_ended', 'transferred'][n % 3]!, creditsChargedCents: 0, durationSecs: 60 });
  }
}

/** Switches the overlay on and answers how long after the counts arrived the graph showed them. */
async function drawOnce(page: Page): Promise<number> {
  await page.evaluate(() => delete (globalThis as any).__trafficArrived);
  await page.getByRole('button', { name: 'Traffic', exact: true }).click();
  const drawn = await page.waitForFunction(
    () => {
      const g = globalThis as any;
      if (g.__trafficArrived === undefined) return false;
      const doc = g.document;
      const cards = [...doc.querySelectorAll('.svelte-flow__node')].filter((n: any) => /^s\d+$/.test(n.dataset.id ?? ''));
      if (cards.length === 0 || !cards.every((n: any) => n.querySelector('[data-traffic-state]'))) return false;
      if (doc.querySelectorAll('[data-traffic-link]').length === 0) return false;
      return performance.now() - g.__trafficArrived;
    },
    undefined,
    { timeout: 60_000, polling: 'raf' },
  );
  const elapsed = Number(await drawn.jsonValue());
  await page.getByRole('button', { name: 'Traffic', exact: true }).click();
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-traffic-state]').length === 0, undefined, { timeout: 60_000 });
  return elapsed;
}

export async function run(): Promise<BenchRow[]> {
  const dir = await tempDir();
  await buildStudioIfStale();
  const server = await startTestServer();
  const chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null), full: true });
  try {
    const account = await createAccount(server);
    const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
    const flowId = await createFlow(server, account.apiKey, `Bench traffic ${STATES} states`, generateFlowYaml(STATES));
    await storeCalls(server, accountId, flowId);
    const page = await chromium.newPage();
    await signInBrowser(page, server.url, account);
    await page.addInitScript(OBSERVE_FRAMES);
    await page.addInitScript(OBSERVE_TRAFFIC);
    await page.goto(`${server.url}/flow-editor?flow=${flowId}`);
    await onScreen(page, STATES, ['s0']);
    await page.waitForTimeout(1500);
    // The first switch loads the overlay's code paths; it is timed with the rest.
    const times: number[] = [];
    await takeFrames(page);
    for (let i = 0; i < RUNS; i++) {
      times.push(await drawOnce(page));
      await page.waitForTimeout(300);
    }
    const frames: Frame[] = await takeFrames(page);
    if (chromium.pageErrors.length > 0) throw new Error(`the page reported errors: ${chromium.pageErrors.join(' | ')}`);
    const sorted = [...times].sort((a, b) => a - b);
    const longest = frames.reduce<Frame | null>((max, f) => (!max || f.duration > max.duration ? f : max), null);
    return [
      {
        name: `Traffic overlay drawn on a ${STATES}-state flow after the counts arrive`,
        value: `${ms(percentile(sorted, 50))} p50, ${ms(sorted.at(-1)!)} max`,
        target: '≤ 200 ms',
        how: `${RUNS} switches on (off between), ${CALLS} ended calls reaching every state; from fetch resolving with GET /v1/analytics/flows/{id} to every state card drawn showing its marks and the links drawn their counts (page clock, polled each frame); Chromium 1280×800, production build; ${load()}`,
      },
      {
        name: `longest frame switching the Traffic overlay on, ${STATES} states`,
        value: longest ? `${ms(longest.duration)} (${longest.scripts || 'no script attributed'})` : 'no frame over 50 ms',
        target: '≤ 100 ms',
        how: `long-animation-frame entries over the ${RUNS} switches on and off`,
      },
    ];
  } finally {
    await chromium.close();
    await server.close();
    await dir.remove();
  }
}
