// Hosted API figures, all measured in one run on this machine:
// - GET /v1/flows with an API key against a bare Fastify route returning the same JSON (the ratio
//   is the figure; target ≥ 0.5): what auth, rate limits, the store and the error plumbing cost;
// - login latency under concurrent logins at the production scrypt cost, and whether /health
//   still answers quickly meanwhile.
// Durable writes have their own bench, writes.bench.ts.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';

const run$ = promisify(execFile);
const SECONDS = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 5);

/** autocannon against `url` from a child process: 10 connections for VOXFLOW_BENCH_SECONDS. */
export async function load(url: string, headers: Record<string, string> = {}) {
  const { stdout } = await run$(process.execPath, ['--import', 'tsx', new URL('./load-generator.ts', import.meta.url).pathname, url, '10', String(SECONDS), JSON.stringify(headers)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as { rps: number; p50: number; p99: number; non2xx: number; errors: number };
}

/**
 * The list `GET /v1/flows` is measured on (a new account's five flows on `server`) and its floor:
 * a bare Fastify route serving the same JSON, measured with `measure` around its load (the caller
 * may time its CPU). The account's helpers are passed in where a bench runs another tree's.
 */
export async function listAndItsFloor<T>(
  server: { request: TestServer['request'] },
  measure: (bareUrl: string) => Promise<T>,
  helpers: { createAccount: typeof createAccount; createFlow: typeof createFlow } = { createAccount, createFlow },
): Promise<{ account: Awaited<ReturnType<typeof createAccount>>; floor: T }> {
  const account = await helpers.createAccount(server as TestServer);
  for (let i = 0; i < 5; i++) await helpers.createFlow(server as TestServer, account.apiKey, `Flow ${i}`);
  const listBody = JSON.stringify((await server.request('GET', '/v1/flows', { apiKey: account.apiKey })).body);
  const bare = Fastify({ logger: false });
  bare.get('/bare', async (_request, reply) => reply.type('application/json').send(listBody));
  try {
    return { account, floor: await measure(await bare.listen({ host: '127.0.0.1', port: 0 })) };
  } finally {
    await bare.close();
  }
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  // As production runs it: no answer parsed against its schema (the tests do that).
  const server = await startTestServer({ passwordHashCost: 17, rateLimit: { authPerMinute: 1e6, credentialPerMinute: 1e9, ipPerMinute: 1e9 } }, { checkResponses: false });
  try {
    const { account, floor: baseline } = await listAndItsFloor(server, (bareUrl) => load(`${bareUrl}/bare`));
    const ours = await load(`${server.url}/v1/flows`, { 'x-service-key': account.apiKey });
    if (ours.non2xx > 0 || ours.errors > 0) throw new Error(`GET /v1/flows failed under load: ${JSON.stringify(ours)}`);
    const how = `autocannon in a child process, 10 connections, ${SECONDS} s each, 5 flows listed`;
    rows.push({ name: 'GET /v1/flows with API key', value: `${Math.round(ours.rps)} req/s (p50 ${ours.p50} ms)`, how });
    rows.push({ name: 'bare Fastify route, same JSON', value: `${Math.round(baseline.rps)} req/s (p50 ${baseline.p50} ms)`, how });
    rows.push({ name: 'API / bare ratio', value: `${(ours.rps / baseline.rps).toFixed(2)}`, target: '≥ 0.5', how: 'ratio of the two rows above, same run' });

    // Concurrent logins at N = 2^17, with /health polled meanwhile.
    const logins = 8;
    const loginTimes: number[] = [];
    const started = performance.now();
    const healthTimes: number[] = [];
    let loginsDone = false;
    const poll = (async () => {
      while (!loginsDone) {
        const t = performance.now();
        await server.request('GET', '/health');
        healthTimes.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await Promise.all(
      Array.from({ length: logins }, async () => {
        const t = performance.now();
        const response = await server.request('POST', '/auth/login', { body: { email: account.email, password: account.password } });
        if (response.status !== 200) throw new Error(`login failed: ${response.status}`);
        loginTimes.push(performance.now() - t);
      }),
    );
    loginsDone = true;
    await poll;
    loginTimes.sort((a, b) => a - b);
    healthTimes.sort((a, b) => a - b);
    rows.push({
      name: `login latency, ${logins} at once (scrypt N=2^17, 1 at a time)`,
      value: `${ms(percentile(loginTimes, 50))} p50, ${ms(percentile(loginTimes, 100))} max; all in ${ms(performance.now() - started)}`,
      how: `${logins} concurrent POST /auth/login over HTTP`,
    });
    rows.push({ name: 'GET /health while those logins run', value: `${ms(percentile(healthTimes, 50))} p50, ${ms(percentile(healthTimes, 95))} p95 (${healthTimes.length} polls)`, how: 'polled every 20 ms during the logins' });

  } finally {
    await server.close();
  }
  return rows;
}
