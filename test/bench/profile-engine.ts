// Not a bench: runs N real-time WebSocket sessions against an in-process server for S seconds,
// so `node --cpu-prof --import tsx test/bench/profile-engine.ts N S` shows where a session's CPU
// goes. VOXFLOW_BENCH_TTS=openai uses the hosted-style fake TTS. VOXFLOW_BENCH_OBSERVABILITY=1
// turns on metrics and tracing as the engine bench's observability row does: /metrics scraped
// every second, every call traced to an OTLP/HTTP sink, both from a process of their own.
// VOXFLOW_BENCH_PROFILE=<file> writes the main thread's CPU profile of the measuring window alone
// (no start-up, no shut-down) to that file; VOXFLOW_BENCH_HEAP_PROFILE=<file> the window's sampled
// allocations (what makes the GC's work). Prints the window's CPU per thread.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { wsUrl } from '../support/voice-client.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';
import { threadCpu, threadCpuReport } from './thread-cpu.ts';

const [sessions = '10', seconds = '15'] = process.argv.slice(2);
const observed = process.env.VOXFLOW_BENCH_OBSERVABILITY === '1';
// Prometheus and the collector in a process of their own, as in the bench.
const sink = observed ? spawnTs('./observability-sinks-process.ts', ['sink']) : null;
const sinkUrl = sink ? await lines(sink).next() : '';
const token = 'profile-metrics-token';
const { server, apiKey, flowId, close } = await startLoadRig({
  tts: process.env.VOXFLOW_BENCH_TTS === 'openai' ? 'openai' : 'flite',
  ...(observed ? { config: { observability: { metricsToken: token, otelEndpoint: sinkUrl, otelTracesSampler: 'always_on' } } } : {}),
});
const scraper = observed ? spawnTs('./observability-sinks-process.ts', ['scrape', `${server.url}/metrics`, token]) : null;
const clients = spawnTs('./engine-load-clients.ts', [wsUrl(server.url, ''), apiKey, flowId, sessions, seconds]);
const out = lines(clients);
await out.next(); // all connected
await new Promise((r) => setTimeout(r, 3000));
const profileTo = process.env.VOXFLOW_BENCH_PROFILE;
const heapProfileTo = process.env.VOXFLOW_BENCH_HEAP_PROFILE;
const inspector = profileTo || heapProfileTo ? new Session() : null;
inspector?.connect();
if (inspector && profileTo) {
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.start');
}
if (inspector && heapProfileTo) {
  await inspector.post('HeapProfiler.enable');
  await inspector.post('HeapProfiler.startSampling', { samplingInterval: 32 * 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
const lateBefore = AudioOut.lateFrames;
const cpuBefore = process.cpuUsage();
const threadsBefore = threadCpu();
const t0 = performance.now();
const summary = await out.next();
const wall = performance.now() - t0;
if (inspector && profileTo) writeFileSync(profileTo, JSON.stringify((await inspector.post('Profiler.stop')).profile));
if (inspector && heapProfileTo) writeFileSync(heapProfileTo, JSON.stringify((await inspector.post('HeapProfiler.stopSampling')).profile));
inspector?.disconnect();
const cpu = process.cpuUsage(cpuBefore);
const threads = threadCpuReport(threadsBefore, threadCpu(), wall);
lag.disable();
process.stdout.write(
  `${summary}\nserver CPU ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(1)}% of a core (${threads}); lag p50 ${(lag.percentile(50) / 1e6).toFixed(1)} p99 ${(lag.percentile(99) / 1e6).toFixed(1)} max ${(lag.max / 1e6).toFixed(1)} ms; late frames ${AudioOut.lateFrames - lateBefore}\n`,
);
scraper?.kill();
await close();
sink?.kill();
process.exit(0);
