// Durable writes against the disk's own floor, all in one run on this machine:
// - the floor: append a small record to a file in the server's data folder and fdatasync it;
// - POST /v1/sessions and POST /v1/flows over HTTP (the journal record fsync'd before the
//   answer), one writer at a time and eight at once (group commit).
// Each row gives p50/p95 and the ratio of its p50 to the floor's p50 in the same run; for
// POST /v1/sessions also the two ratios with targets: one writer's p50 and eight writers' p95,
// each ÷ the floor's p50. The writers run in a child process (write-clients.ts), as a business's
// backend would. (`bench postgres` prints the same ratios for both stores, PostgreSQL's against
// the disk under its cluster.)
import { execFile } from 'node:child_process';
import { open, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';

export async function fsyncFloor(dir: string, count: number): Promise<number[]> {
  const path = join(dir, 'floor.bin');
  const handle = await open(path, 'a');
  const record = Buffer.alloc(256, 7);
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const t = performance.now();
      await handle.write(record);
      await handle.datasync();
      times.push(performance.now() - t);
    }
  } finally {
    await handle.close();
    await rm(path, { force: true });
  }
  return times.sort((a, b) => a - b);
}

const run$ = promisify(execFile);

/** Sorted latencies (ms) of `count` POSTs, `writers` at a time, from write-clients.ts. `server.url` may list several servers with commas. */
export async function timed(server: Pick<TestServer, 'url'>, path: string, apiKey: string, body: unknown, count: number, writers: number): Promise<number[]> {
  const script = new URL('./write-clients.ts', import.meta.url).pathname;
  const { stdout } = await run$(process.execPath, ['--import', 'tsx', script, server.url, path, apiKey, JSON.stringify(body), String(count), String(writers)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as number[];
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const server: TestServer = await startTestServer({ rateLimit: { authPerMinute: 1e6, credentialPerMinute: 1e9, ipPerMinute: 1e9 } });
  try {
    const account = await createAccount(server);
    const flowId = await createFlow(server, account.apiKey);
    const session = { flow_id: flowId };
    const flow = { name: 'Flow {i}', yaml_content: GUESSING_GAME_YAML };

    const floor = await fsyncFloor(server.dataDir, 300);
    const floorP50 = percentile(floor, 50);
    rows.push({
      name: 'fsync floor: append 256 B + fdatasync',
      value: `${ms(floorP50)} p50, ${ms(percentile(floor, 95))} p95`,
      how: `300 appends to a file in the data folder, one at a time; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
    });
    const row = (name: string, times: number[], target: string, how: string) =>
      rows.push({
        name,
        value: `${ms(percentile(times, 50))} p50, ${ms(percentile(times, 95))} p95; p50 ${(percentile(times, 50) / floorP50).toFixed(1)}× the floor`,
        target,
        how,
      });

    const { apiKey } = account;
    const client = 'from a child process over keep-alive HTTP with an API key, after 20 untimed';
    const one = await timed(server, '/v1/sessions', apiKey, session, 200, 1);
    row('POST /v1/sessions, one writer', one, 'p50 ≤ 2 ms, p95 ≤ 5 ms', `200 sequential session starts ${client}; each answered after its fsync`);
    const eight = await timed(server, '/v1/sessions', apiKey, session, 200, 8);
    row('POST /v1/sessions, eight writers at once', eight, 'p95 ≤ 10 ms', `25 rounds of 8 concurrent session starts ${client}`);
    const load = `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;
    rows.push({
      name: 'POST /v1/sessions, one writer: p50 ÷ fsync floor p50',
      value: `${(percentile(one, 50) / floorP50).toFixed(1)}×`,
      target: '≤ 5×',
      how: `the rows above, same run; ${load}`,
    });
    rows.push({
      name: 'POST /v1/sessions, eight writers: p95 ÷ fsync floor p50',
      value: `${(percentile(eight, 95) / floorP50).toFixed(1)}×`,
      target: '≤ 15×',
      how: `the rows above, same run; ${load}`,
    });
    row('POST /v1/flows, one writer', await timed(server, '/v1/flows', apiKey, flow, 100, 1), '', `100 sequential creates of the guessing game ${client}`);
    // Eight tenants, one writer each: one account may have only two flow documents in the
    // parser at once, so eight writers on one account would mostly measure 429s.
    const tenants = [apiKey, ...(await Promise.all(Array.from({ length: 7 }, async () => (await createAccount(server)).apiKey)))];
    row('POST /v1/flows, eight writers at once', await timed(server, '/v1/flows', tenants.join(','), flow, 160, 8), '', `20 rounds of 8 concurrent creates, one per account, ${client}`);
  } finally {
    await server.close();
  }
  return rows;
}
