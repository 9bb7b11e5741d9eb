// Not a bench: GET /v1/flows with an API key, CPU time of the server's process per request and
// req/s beside a bare Fastify route serving the same JSON, for one or more source trees in turn
// (this one, and e.g. a worktree of the commit before a change), each server built as production
// builds it: buildApp, no answer checked against its schema, logs off. On a shared machine req/s
// swings by twice between runs and CPU time far less, so alternate the trees and read CPU time:
//   npx tsx test/bench/get-path-before-after.ts [sqljs|postgres|both] <tree> [<tree> …]
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { listAndItsFloor, load } from './api.bench.ts';

const [which = 'both', ...given] = process.argv.slice(2);
const trees = given.length > 0 ? given : [new URL('../..', import.meta.url).pathname.replace(/\/$/, '')];
const SECONDS = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 5);

async function measure(tree: string, label: string, databaseUrl?: string): Promise<void> {
  const { buildApp } = await import(`${tree}/server/app.ts`);
  const { makeConfig } = await import(`${tree}/server/config.ts`);
  const { createAccount, createFlow, jsonRequester } = await import(`${tree}/test/support/server.ts`);
  const { noVoiceInput } = await import(`${tree}/test/support/no-voice-input.ts`);
  const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-get-path-'));
  const keys = databaseUrl ? { databaseUrl, secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') } : {};
  const config = makeConfig({ host: '127.0.0.1', port: 0, logLevel: 'silent', passwordHashCost: 10, dataDir, rateLimit: { authPerMinute: 1e6, credentialPerMinute: 1e9, ipPerMinute: 1e9 }, ...keys });
  const app = await buildApp(config, { checkResponses: false, voiceInput: noVoiceInput, warmUpVoice: false });
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const server = { url, request: jsonRequester(url) };
    // The tree's own helpers make the account and its flows, as that tree's server expects them.
    const { account, floor } = await listAndItsFloor(
      server,
      async (bareUrl) => {
        const started = process.cpuUsage();
        const loaded = await load(`${bareUrl}/bare`);
        return { loaded, cpu: process.cpuUsage(started) };
      },
      { createAccount, createFlow },
    );
    const { loaded: baseline, cpu: bareCpu } = floor;
    const before = process.cpuUsage();
    const ours = await load(`${url}/v1/flows`, { 'x-service-key': account.apiKey });
    const cpu = process.cpuUsage(before);
    if (ours.non2xx > 0 || ours.errors > 0) throw new Error(`GET /v1/flows failed under load: ${JSON.stringify(ours)}`);
    const per = (used: NodeJS.CpuUsage, rps: number) => ((used.user + used.system) / (rps * SECONDS)).toFixed(1);
    console.log(
      `${label} ${tree}: ${(ours.rps / baseline.rps).toFixed(2)} (${Math.round(ours.rps)} vs ${Math.round(baseline.rps)} req/s); server CPU ${per(cpu, ours.rps)} µs a request, bare Fastify's ${per(bareCpu, baseline.rps)} µs; load average ${loadavg()[0]!.toFixed(1)}`,
    );
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

for (const tree of trees) {
  if (which !== 'postgres') await measure(tree, 'sql.js');
  if (which !== 'sqljs') {
    const { startPostgres } = await import(`${tree}/test/support/postgres.ts`);
    const cluster = await startPostgres();
    try {
      await measure(tree, 'PostgreSQL', await cluster.createDatabase('voxflow_get_path'));
    } finally {
      await cluster.stop();
    }
  }
}
process.exit(0);
