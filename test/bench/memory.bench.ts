// Memory per call, measured in one run on this machine (`npm run bench -- memory`):
// - the server's resident memory at rest and per live session: the slope of RSS over a ladder of
//   0, 10, 20 and 40 live sessions (least squares), for WebSocket and WebRTC callers, once with a
//   hosted-style TTS (the fakes' OpenAI speech) and once with flite in the server. Callers talk in
//   real time from a child process (the load rig's clients), so their memory is not counted;
//   RSS is read a few seconds into each step, once greetings and first turns ran;
// - the heap after sessions end: 1,000 WebSocket sessions started (session_started seen) and
//   ended in batches of 50, the heap read after a forced GC before and after. It must not grow
//   beyond noise: what grows per session is printed.
// The server runs in this process (as the other load benches'); this process's own part is a
// constant, which neither a slope nor a growth counts.
import os from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import WebSocket from 'ws';
import type { BenchRow } from './bench-kit.ts';
import { lines, spawnTs, startLoadRig, type LoadRig } from './load-rig.ts';

const MiB = 1024 * 1024;
const STEPS = [0, 10, 20, 40];
const HOLD_SECONDS = 7;

/** A forced, full GC (twice: finalizers of the first free more for the second). */
function forcedGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => {
    gc();
    gc();
  };
}
const gc = forcedGc();

/** Slope and intercept of the least-squares line through (x, y). */
function fit(points: Array<[number, number]>): { slope: number; intercept: number } {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx };
}

/** RSS and heap (after a GC) with `sessions` callers live on `transport`. */
async function step(rig: LoadRig, transport: 'websocket' | 'webrtc', sessions: number): Promise<{ rss: number; heap: number; failures: number }> {
  const read = () => {
    gc();
    const usage = process.memoryUsage();
    return { rss: usage.rss, heap: usage.heapUsed };
  };
  if (sessions === 0) {
    await new Promise((r) => setTimeout(r, 1000));
    return { ...read(), failures: 0 };
  }
  const { server, apiKey, flowId } = rig;
  const clients =
    transport === 'websocket'
      ? spawnTs('./engine-load-clients.ts', [server.url.replace(/^http/, 'ws'), apiKey, flowId, String(sessions), String(HOLD_SECONDS)])
      : spawnTs('./webrtc-load-clients.ts', [server.url, apiKey, flowId, String(sessions), String(HOLD_SECONDS)]);
  const out = lines(clients);
  // The load rig's WebRTC callers wait for every peer to connect: one that never does (a loaded
  // machine) would hold the bench for ever, so a step gives up after a minute.
  const within = <T>(promise: Promise<T>) =>
    Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${sessions} ${transport} callers: no word for 60 s`)), 60_000).unref())]);
  try {
    await within(out.next()); // all connected
  } catch (error) {
    clients.kill();
    throw error;
  }
  await new Promise((r) => setTimeout(r, (HOLD_SECONDS - 2) * 1000)); // greetings, first turns
  const live = read();
  const done = JSON.parse(await within(out.next()).catch((error: unknown) => (clients.kill(), Promise.reject(error)))) as { failures: number; connected?: number; opened?: number };
  await new Promise((r) => setTimeout(r, 2500)); // the sessions end, the peers close
  const connected = done.connected ?? done.opened ?? 0;
  return { ...live, failures: done.failures + (sessions - connected) };
}

async function ladder(rig: LoadRig, transport: 'websocket' | 'webrtc', tts: string): Promise<BenchRow> {
  const points: Array<[number, number]> = [];
  const heaps: Array<[number, number]> = [];
  const load: number[] = [];
  let failures = 0;
  // A first step unmeasured: the server's first sessions of a kind fill caches, pools, JIT code and
  // the allocator's arenas, which later steps reuse (in a first run RSS fell from 394 to 373 MiB
  // over the ladder without it).
  await step(rig, transport, STEPS.at(-1)! / 2);
  for (const sessions of STEPS) {
    load.push(os.loadavg()[0]!);
    const r = await step(rig, transport, sessions);
    points.push([sessions, r.rss / MiB]);
    heaps.push([sessions, r.heap / MiB]);
    failures += r.failures;
  }
  const rss = fit(points);
  const heap = fit(heaps);
  const target = transport === 'websocket' ? 1 : 2;
  return {
    name: `memory per live ${transport === 'websocket' ? 'WebSocket' : 'WebRTC'} session, ${tts}`,
    value: `${rss.slope.toFixed(2)} MiB RSS per session (heap ${heap.slope.toFixed(2)}); RSS ${points.map(([n, m]) => `${n}: ${m.toFixed(0)}`).join(', ')} MiB${rss.slope > target ? ' ✗' : ''}${failures > 0 ? `; ${failures} callers failed ✗` : ''}`,
    target: `≤ ${target} MiB`,
    how: `least-squares slope of the server process's RSS over ${STEPS.join(', ')} live sessions, after an unmeasured step of ${STEPS.at(-1)! / 2} (${HOLD_SECONDS} s of real-time callers each, read after ${HOLD_SECONDS - 2} s, after a forced GC); heap = heapUsed likewise; load average ${load.map((l) => l.toFixed(1)).join(', ')}`,
  };
}

/** One WebSocket session started and ended: open, wait for session_started, close. */
function oneSession(rig: LoadRig): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${rig.server.url.replace(/^http/, 'ws')}/ws?mode=flow&program_id=${rig.flowId}`, { headers: { 'x-service-key': rig.apiKey } });
    const timer = setTimeout(() => finish(false), 20_000);
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.close();
      resolve(ok);
    };
    socket.on('message', (data, isBinary) => {
      if (!isBinary && String(data).includes('"session_started"')) finish(true);
    });
    socket.on('error', () => finish(false));
    socket.on('unexpected-response', () => finish(false));
  });
}

async function churn(rig: LoadRig, total: number, batch: number): Promise<BenchRow> {
  const runBatches = async (count: number) => {
    let failed = 0;
    for (let done = 0; done < count; done += batch) failed += (await Promise.all(Array.from({ length: Math.min(batch, count - done) }, () => oneSession(rig)))).filter((ok) => !ok).length;
    return failed;
  };
  const settledHeap = async () => {
    await new Promise((r) => setTimeout(r, 3000)); // ended sessions write their records, timers lapse
    gc();
    return process.memoryUsage().heapUsed / MiB;
  };
  const loadBefore = os.loadavg()[0]!;
  await runBatches(batch); // warm-up: caches, JIT, pools
  const before = await settledHeap();
  const failed = await runBatches(total);
  const after = await settledHeap();
  const growth = after - before;
  return {
    name: `heap after ${total} WebSocket sessions started and ended`,
    value: `${growth >= 0 ? '+' : ''}${growth.toFixed(2)} MiB (${before.toFixed(1)} → ${after.toFixed(1)} MiB; ${((growth * 1024) / total).toFixed(2)} KiB per session)${failed > 0 ? `; ${failed} sessions failed ✗` : ''}`,
    target: 'no growth beyond noise',
    how: `batches of ${batch}, each open → session_started → close; heapUsed after a forced GC, 3 s after a warm-up batch and after the last; load average ${loadBefore.toFixed(1)} → ${os.loadavg()[0]!.toFixed(1)}`,
  };
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  // Each row as soon as it is measured: the whole bench takes minutes.
  const push = (row: BenchRow) => {
    rows.push(row);
    process.stderr.write(`memory: ${row.name}: ${row.value} (${row.how})\n`);
  };
  for (const tts of ['openai', 'flite'] as const) {
    const rig = await startLoadRig({ tts });
    try {
      const label = tts === 'openai' ? 'hosted-style TTS' : 'flite';
      push(await ladder(rig, 'websocket', label));
      push(await ladder(rig, 'webrtc', label));
      if (tts === 'openai' && process.env.VOXFLOW_BENCH_CHURN !== '0') push(await churn(rig, 1000, 50));
    } finally {
      await rig.close();
    }
  }
  return rows;
}
