// Not a bench: isolation.bench.ts's scene (ten live calls, then a noisy account looping 255 KiB
// flow uploads and JSON edits beside them) with the server's main thread profiled over the
// attack window only (node:inspector, in process), so that
//   node --import tsx test/bench/profile-isolation.ts [seconds] [profile.cpuprofile] [calls]
// prints what each noisy request costs the thread that paces audio: main-thread CPU per request
// (the attack window's rate minus the quiet window's, times the window, over the requests), the
// garbage collector's pauses on that thread, and the functions that spend the time, self and
// inclusive, in ms per request. With calls = 0 the figures are the noisy requests' alone: on a
// machine shared with other work, the cleanest per-request cost.
import { writeFileSync } from 'node:fs';
import { Session, type Profiler } from 'node:inspector';
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { createAccount } from '../support/server.ts';
import { wsUrl } from '../support/voice-client.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';
import { threadCpu, threadCpuReport } from './thread-cpu.ts';

const [secondsArg = '15', profilePath, callsArg = '10'] = process.argv.slice(2);
const seconds = Number(secondsArg);
const calls = Number(callsArg);

const mainCpuMs = () => threadCpu().find((t) => t.tid === process.pid)!.cpuMs;

const session = new Session();
session.connect();
const post = <T>(method: string, params?: object) =>
  new Promise<T>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result as T))));

const { server, apiKey, flowId, close } = await startLoadRig({ tts: 'openai' });
const noisy = await createAccount(server);
const clients = calls > 0 ? spawnTs('./engine-load-clients.ts', [wsUrl(server.url, ''), apiKey, flowId, String(calls), String(2 * seconds + 6)]) : null;
const out = clients ? lines(clients) : null;
await out?.next(); // all connected
await new Promise((r) => setTimeout(r, 3000));

// The collector's pauses on this thread, in each window.
const gcIn = { quiet: { minor: [] as number[], major: [] as number[] }, attack: { minor: [] as number[], major: [] as number[] } };
let phase: keyof typeof gcIn = 'quiet';
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    (kind === constants.NODE_PERFORMANCE_GC_MAJOR ? gcIn[phase].major : gcIn[phase].minor).push(entry.duration);
  }
});
gcObserver.observe({ entryTypes: ['gc'] });
const threadsQuiet = threadCpu();

// The quiet window: the calls alone.
let cpu0 = mainCpuMs();
let t0 = performance.now();
await new Promise((r) => setTimeout(r, seconds * 1000));
const quietWall = performance.now() - t0;
const quietRate = (mainCpuMs() - cpu0) / quietWall;
const quietThreadsLine = threadCpuReport(threadsQuiet, threadCpu(), quietWall);

// The attack window, profiled.
await post('Profiler.enable');
await post('Profiler.setSamplingInterval', { interval: 200 });
const attacker = spawnTs('./isolation-attacker.ts', [server.url, noisy.apiKey, String(seconds)]);
const summaryLine = lines(attacker).next();
await post('Profiler.start');
phase = 'attack';
const threadsBefore = threadCpu();
cpu0 = mainCpuMs();
t0 = performance.now();
const summary = JSON.parse(await summaryLine) as { requests: number; statuses: Record<string, number>; healthP99: number };
const wall = performance.now() - t0;
const attackCpu = mainCpuMs() - cpu0;
const threadsLine = threadCpuReport(threadsBefore, threadCpu(), wall);
gcObserver.disconnect();
const { profile } = await post<{ profile: Profiler.Profile }>('Profiler.stop');
if (profilePath) writeFileSync(profilePath, JSON.stringify(profile));
await out?.next();

const requests = summary.requests;
const extraPerRequest = (attackCpu - quietRate * wall) / requests;

// Self and inclusive time per function, from the samples.
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const keyOf = (n: Profiler.ProfileNode) => {
  const f = n.callFrame;
  const file = f.url.replace(/^.*\/(node_modules\/[^/]+|server|test)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
};
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const stackKeys = new Map<number, Set<string>>();
const keysOnStack = (id: number): Set<string> => {
  let keys = stackKeys.get(id);
  if (!keys) {
    const up = parent.get(id);
    keys = new Set(up === undefined ? [] : keysOnStack(up));
    keys.add(keyOf(nodes.get(id)!));
    stackKeys.set(id, keys);
  }
  return keys;
};
const samples = profile.samples ?? [];
const deltas = profile.timeDeltas ?? [];
for (let i = 0; i < samples.length; i++) {
  const ms = (deltas[i + 1] ?? 0) / 1000;
  const node = nodes.get(samples[i]!)!;
  const name = node.callFrame.functionName;
  if (name === '(idle)' || name === '(program)') continue;
  self.set(keyOf(node), (self.get(keyOf(node)) ?? 0) + ms);
  for (const key of keysOnStack(node.id)) inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
}
const top = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `  ${(v / requests).toFixed(2).padStart(7)} ms  ${k}`)
    .join('\n');
const busy = [...self.values()].reduce((a, b) => a + b, 0);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const gcLine = (kind: string, xs: number[]) => `${xs.length} ${kind}, ${sum(xs).toFixed(0)} ms in all (${(sum(xs) / requests).toFixed(1)} per request), longest ${Math.max(0, ...xs).toFixed(1)} ms`;

process.stdout.write(
  [
    `attack window ${(wall / 1000).toFixed(1)} s: ${requests} noisy requests ${JSON.stringify(summary.statuses)}, /health p99 ${summary.healthP99.toFixed(1)} ms`,
    `main thread: ${((quietRate * 100)).toFixed(1)}% of a core with the calls alone, ${((attackCpu / wall) * 100).toFixed(1)}% beside the noisy account`,
    `main-thread CPU per noisy request: ${extraPerRequest.toFixed(1)} ms (profiled busy time ${(busy / requests).toFixed(1)} ms per request, calls included)`,
    `threads of the server process, share of one core: calls alone ${quietThreadsLine}; beside the noisy account ${threadsLine}`,
    `their nice values: ${threadCpu().filter((t) => t.nice !== 0).map((t) => `#${t.tid} ${t.nice}`).join(', ') || 'all 0'} (the rest 0)`,
    `GC pauses with the calls alone: ${gcLine('minor', gcIn.quiet.minor)}; ${gcLine('major', gcIn.quiet.major)} (per request: as if over the same requests)`,
    `GC pauses beside the noisy account: ${gcLine('minor', gcIn.attack.minor)}; ${gcLine('major', gcIn.attack.major)}`,
    'self time per request, top 25:',
    top(self, 25),
    'inclusive time per request, top 40:',
    top(inclusive, 40),
    '',
  ].join('\n'),
);
session.disconnect();
await close();
process.exit(0);
