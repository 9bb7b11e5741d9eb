// Not a bench: POST /v1/sessions on one store under a profiler, for where a start's CPU goes.
// `node --cpu-prof --cpu-prof-dir=DIR --import tsx test/bench/profile-writes.ts [sqljs|postgres] [writers] [count]`
// profiles the server's threads (the store worker too, each thread writes its own profile); the
// clients run in a child process (write-clients.ts), which --cpu-prof does not follow. Prints the
// latencies and the CPU per start of this process (process.cpuUsage: the server and its threads),
// split by thread (the main thread, the store's, libuv's pool, V8's helpers: /proc), and, on
// PostgreSQL, of the cluster's processes (/proc ticks).
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';
import { percentile } from './bench-kit.ts';
import { clusterTicks } from './postgres.bench.ts';
import { timed } from './writes.bench.ts';
import { threads } from '../support/threads.ts';

const [kind = 'sqljs', writers = '1', count = '2000'] = process.argv.slice(2);
const unlimited = { rateLimit: { authPerMinute: 1e6, credentialPerMinute: 1e9, ipPerMinute: 1e9 } };
let cluster: TestPostgres | null = null;
try {
  if (kind === 'postgres') cluster = await startPostgres();
  const server = await startTestServer(
    cluster
      ? { ...unlimited, databaseUrl: await cluster.createDatabase('voxflow_profile_writes'), secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') }
      : unlimited,
  );
  try {
    const { apiKey } = await createAccount(server);
    const flowId = await createFlow(server, apiKey);
    const n = Number(count);
    const before = threads();
    const cpu = process.cpuUsage();
    const ticks = cluster ? clusterTicks(cluster) : 0;
    const from = process.hrtime.bigint() / 1000n;
    const times = await timed(server, '/v1/sessions', apiKey, { flow_id: flowId }, n, Number(writers));
    const used = process.cpuUsage(cpu);
    const after = threads();
    const database = cluster ? `, PostgreSQL's processes ${(((clusterTicks(cluster) - ticks) * 10_000) / (n + 20)).toFixed(0)} µs` : '';
    // The timed window on the profiles' clock (µs, monotonic), to cut start-up out of them.
    console.log(`window ${from} ${process.hrtime.bigint() / 1000n}`);
    console.log(
      `${kind}, ${writers} writer(s), ${n} starts: p50 ${percentile(times, 50).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms; ` +
        `server CPU ${((used.user + used.system) / (n + 20)).toFixed(0)} µs per start${database}; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
    );
    // Per thread, µs per start: the main thread by name, the others each where they used over 20 µs a start.
    const start = new Map(before.map((t) => [t.tid, t.cpuMs]));
    const split = after
      .map((t) => ({ name: t.tid === process.pid ? 'main' : `${t.name}#${t.tid}`, us: ((t.cpuMs - (start.get(t.tid) ?? 0)) * 1000) / (n + 20) }))
      .filter((t) => t.us >= 1)
      .sort((a, b) => b.us - a.us);
    const small = split.filter((t) => t.name !== 'main' && t.us < 20).reduce((sum, t) => sum + t.us, 0);
    console.log(`per thread (µs per start): ${[...split.filter((t) => t.name === 'main' || t.us >= 20).map((t) => `${t.name} ${t.us.toFixed(0)}`), `others ${small.toFixed(0)}`].join(', ')}`);
  } finally {
    await server.close();
  }
} finally {
  await cluster?.stop();
}
