// Not a bench: what one noisy request of isolation.bench.ts costs each thread of the server, with
// no calls, no /health polls and no profiler, over a fixed number of requests rather than a window, so that a busy
// machine makes the run longer but not the figure different (CPU time, Linux schedstat):
//   node --import tsx test/bench/isolation-cost.ts [requests]
// Prints the main thread's (the one that paces audio), the store's and the flow workers' CPU
// time per request, and the machine's load average beside them.
import { loadavg } from 'node:os';
import { createAccount } from '../support/server.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';
import { threadCpu } from './thread-cpu.ts';

const requests = Number(process.argv[2] ?? 40);
const { server, close } = await startLoadRig({ tts: 'openai' });
try {
  const noisy = await createAccount(server);
  const before = new Map(threadCpu().map((t) => [t.tid, t.cpuMs]));
  const load0 = loadavg()[0]!;
  const attacker = spawnTs('./isolation-attacker.ts', [server.url, noisy.apiKey, '3600', String(requests), 'no-health']);
  const summary = JSON.parse(await lines(attacker).next()) as { requests: number; statuses: Record<string, number> };
  let main = 0;
  let store = 0;
  let others = 0;
  for (const t of threadCpu()) {
    const used = t.cpuMs - (before.get(t.tid) ?? 0);
    if (t.tid === process.pid) main += used;
    else if (t.name === 'voxflow-store') store += used;
    else others += used;
  }
  const per = (ms: number) => (ms / summary.requests).toFixed(1);
  process.stdout.write(
    `${summary.requests} noisy requests ${JSON.stringify(summary.statuses)}: main thread ${per(main)} ms, store thread ${per(store)} ms, other threads (flow workers, GC helpers, libuv) ${per(others)} ms of CPU per request; load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}\n`,
  );
} finally {
  await close();
}
process.exit(0);
