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

async function measure(config: ConfigInput, seconds: number): Promise<{ quiet: number[]; flood: number[]; statuses: Record<string, number>; connects: number }> {
  const server = await startTestServer(config);
  try {
    const reader = await createAccount(server);
    await createFlow(server, reader.apiKey);
    const flooder = await createAccount(server);
    const quiet = await readLatencies(server, reader.apiKey, performance.now() + seconds * 1000);
    const urls = [wsUrl(server.url, '/ws?mode=assistant'), ...Array.from({ length: 8 }, (_, i) => wsUrl(server.url, `/v1/ws/vx_st_never${i}`))];
    const args = [String(seconds + 2), String(CONCURRENCY), JSON.stringify({ 'x-service-key': flooder.apiKey }), ...urls.slice(0, 1), ...urls];
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('./ws-flood-client.ts', import.meta.url).pathname, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const summary = lines(child).next();
    await delay(1000); // the flood at full strength
    const flood = await readLatencies(server, reader.apiKey, performance.now() + seconds * 1000);
    const { statuses, connects } = JSON.parse(await summary) as { statuses: Record<string, number>; connects: number };
    return { quiet, flood, statuses, connects };
  } finally {
    await server.close();
  }
}

const p95 = (sorted: number[]) => ms(percentile(sorted, 95));
const p50 = (sorted: number[]) => ms(percentile(sorted, 50));
const answered = (s: Record<string, number>) => Object.entries(s).map(([status, n]) => `${n} × ${status}`).join(', ');

export async function run(): Promise<BenchRow[]> {
  const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
  const off = await measure({ limits: { pendingUpgrades: 1_000_000, pendingUpgradesPerAddress: 1_000_000 } }, seconds);
  const on = await measure({}, seconds);
  const how = `\`bench ws-flood\`: GET /v1/flows of another account, one at a time for ${seconds} s, quiet then during a flood of ${CONCURRENCY} connects in flight from one address (a child process)`;
  return [
    {
      name: "another account's GET /v1/flows during a WebSocket connect flood, pending-upgrade caps off (as before them)",
      value: `${p95(off.flood)} p95, ${p50(off.flood)} p50 (quiet: ${p95(off.quiet)} p95); the flood's ${off.connects} connects: ${answered(off.statuses)}`,
      how,
    },
    {
      name: "another account's GET /v1/flows during a WebSocket connect flood, caps at their defaults (128, 32 per address)",
      value: `${p95(on.flood)} p95, ${p50(on.flood)} p50 (quiet: ${p95(on.quiet)} p95); the flood's ${on.connects} connects: ${answered(on.statuses)}`,
      target: 'p95 ≤ 2× quiet',
      how,
    },
  ];
}
