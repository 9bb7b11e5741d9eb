// A flood of voice WebSocket connects to one node, and another account's reads on that node
// (docs/benchmarks.md): GET /v1/flows with the other account's API key, one request at a time,
// quiet and then during a flood from one address (a child process, at the server's own priority as
// an attacker's would be, keeping 400 connects in flight:
// half to /ws with a third account's API key, the whole admission path, half to /v1/ws/ with
// tokens never handed out, a claim in the store each). In one run, the server with the pending-
// upgrade caps off (as before them) and with their defaults.
import { setTimeout as delay } from 'node:timers/promises';
import type { ConfigInput } from '../../server/config.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { wsUrl } from '../support/voice-client.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';
import { spawn } from 'node:child_process';
import { lines } from './load-rig.ts';
import { threadCpu } from './thread-cpu.ts';

/** CPU time of this process's main thread (the server's, which paces audio) and of the store's thread, in ms. */
const cpu = () => {
  const threads = threadCpu();
  return { main: threads.find((t) => t.tid === process.pid)?.cpuMs ?? NaN, store: threads.reduce((sum, t) => sum + (t.name === 'voxflow-store' ? t.cpuMs : 0), 0) };
};

const CONCURRENCY = 400;

async function readLatencies(server: TestServer, apiKey: string, untilMs: number): Promise<number[]> {
  const out: number[] = [];
  while (performance.now() < untilMs) {
    const started = performance.now();
    const response = await server.request('GET', '/v1/flows', { apiKey });
    if (response.status !== 200) throw new Error(`GET /v1/flows answered ${response.status}`);
    out.push(performance.now() - started);
  }
  return out.sort((a, b) => a - b);
}

async function measure(config: ConfigInput, seconds: number): Promise<{ quiet: number[]; flood: number[]; statuses: Record<string, number>; connects: number; mainMs: number; storeMs: number; aloneConnects: number }> {
  const server = await startTestServer(config);
  try {
    const reader = await createAccount(server);
    await createFlow(server, reader.apiKey);
    const flooder = await createAccount(server);
    const quiet = await readLatencies(server, reader.apiKey, performance.now() + seconds * 1000);
    const urls = [wsUrl(server.url, '/ws?mode=assistant'), ...Array.from({ length: 8 }, (_, i) => wsUrl(server.url, `/v1/ws/vx_st_never${i}`))];
    const flooding = (secs: number) => {
      const args = [String(secs), String(CONCURRENCY), JSON.stringify({ 'x-service-key': flooder.apiKey }), ...urls.slice(0, 1), ...urls];
      const child = spawn(process.execPath, ['--import', 'tsx', new URL('./ws-flood-client.ts', import.meta.url).pathname, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
      return lines(child)
        .next()
        .then((line) => JSON.parse(line) as { statuses: Record<string, number>; connects: number });
    };
    // What a connect costs the server: its threads' CPU over a flood alone, per connect.
    const before = cpu();
    const alone = await flooding(5);
    const after = cpu();
    // Then the other account's reads during a flood.
    const summary = flooding(seconds + 2);
    await delay(1000); // the flood at full strength
    const flood = await readLatencies(server, reader.apiKey, performance.now() + seconds * 1000);
    const { statuses, connects } = await summary;
    return { quiet, flood, statuses, connects, mainMs: after.main - before.main, storeMs: after.store - before.store, aloneConnects: alone.connects };
  } finally {
    await server.close();
  }
}

/** What one refused connect costs the server: 5 s of a flood of unknown session tokens alone, CPU per connect. */
async function refusedConnectCost(config: ConfigInput): Promise<{ mainUs: number; storeUs: number; statuses: Record<string, number> }> {
  const server = await startTestServer(config);
  try {
    const urls = Array.from({ length: 8 }, (_, i) => wsUrl(server.url, `/v1/ws/vx_st_never${i}`));
    const before = cpu();
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('./ws-flood-client.ts', import.meta.url).pathname, '5', String(CONCURRENCY), '{}', ...urls], { stdio: ['ignore', 'pipe', 'inherit'] });
    const { statuses, connects } = JSON.parse(await lines(child).next()) as { statuses: Record<string, number>; connects: number };
    const after = cpu();
    return { mainUs: ((after.main - before.main) / connects) * 1000, storeUs: ((after.store - before.store) / connects) * 1000, statuses };
  } finally {
    await server.close();
  }
}

const p95 = (sorted: number[]) => ms(percentile(sorted, 95));
const p50 = (sorted: number[]) => ms(percentile(sorted, 50));
const perConnect = (m: { mainMs: number; storeMs: number; aloneConnects: number }) =>
  `a connect costs ${((m.mainMs / m.aloneConnects) * 1000).toFixed(0)} µs of the main thread and ${((m.storeMs / m.aloneConnects) * 1000).toFixed(0)} µs of the store's (5 s of flood alone, ${m.aloneConnects} connects)`;
const answered = (s: Record<string, number>) => Object.entries(s).map(([status, n]) => `${n} × ${status}`).join(', ');

export async function run(): Promise<BenchRow[]> {
  const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
  const off = await measure({ limits: { pendingUpgrades: 1_000_000, pendingUpgradesPerAddress: 1_000_000 } }, seconds);
  const on = await measure({}, seconds);
  const checked = await refusedConnectCost({ limits: { pendingUpgrades: 1_000_000, pendingUpgradesPerAddress: 1_000_000 } });
  const shed = await refusedConnectCost({ limits: { pendingUpgrades: 1, pendingUpgradesPerAddress: 1 } });
  const how = `\`bench ws-flood\`: GET /v1/flows of another account, one at a time for ${seconds} s, quiet then during a flood of ${CONCURRENCY} connects in flight from one address (a child process)`;
  const costHow = '`bench ws-flood`: CPU of the server\'s main and store threads over 5 s of connects with unknown session tokens (/v1/ws/…), 400 in flight from a child process, per connect';
  return [
    {
      name: 'a connect refused after its token is looked up (401), caps off',
      value: `${checked.mainUs.toFixed(0)} µs main thread, ${checked.storeUs.toFixed(0)} µs store thread (${answered(checked.statuses)})`,
      how: costHow,
    },
    {
      name: 'a connect shed at the upgrade (503), caps at 1',
      value: `${shed.mainUs.toFixed(0)} µs main thread, ${shed.storeUs.toFixed(0)} µs store thread (${answered(shed.statuses)})`,
      how: costHow,
    },
    {
      name: "another account's GET /v1/flows during a WebSocket connect flood, pending-upgrade caps off (as before them)",
      value: `${p95(off.flood)} p95, ${p50(off.flood)} p50 (quiet: ${p95(off.quiet)} p95); the flood's ${off.connects} connects: ${answered(off.statuses)}; ${perConnect(off)}`,
      how,
    },
    {
      name: "another account's GET /v1/flows during a WebSocket connect flood, caps at their defaults (256, 64 per address)",
      value: `${p95(on.flood)} p95, ${p50(on.flood)} p50 (quiet: ${p95(on.quiet)} p95); the flood's ${on.connects} connects: ${answered(on.statuses)}; ${perConnect(on)}`,
      target: 'p95 ≤ 2× quiet',
      how,
    },
  ];
}
