// Not a bench: N calls over SIP (sipp, the caller of `bench sip`) or N paced WebSocket sessions
// (`bench phone`'s callers) against an in-process server for S seconds, so
// `node --cpu-prof --import tsx test/bench/profile-sip.ts sip|ws N S` shows where a call's CPU
// goes. Prints the window's CPU per thread, the callers' process's CPU, the garbage collections
// (count, pause, and what was allocated between them, per call-second) and the event loop's delay.
import os from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GCProfiler } from 'node:v8';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { wsUrl } from '../support/voice-client.ts';
import { lines, spawnTs } from './load-rig.ts';
import { benchCall, rtpListener, runSipp, startSipRig } from './sip.bench.ts';
import { processShare, processTicks, threadCpu, threadCpuReport } from './thread-cpu.ts';

const [path = 'sip', calls = '20', seconds = '15'] = process.argv.slice(2);
const count = Number(calls);
const windowMs = Number(seconds) * 1000;
const { rig, port } = await startSipRig();
const dir = await mkdtemp(join(os.tmpdir(), 'voxflow-profile-sip-'));
const ear = await rtpListener();
try {
  let callersPid = 0;
  let finished: Promise<unknown>;
  if (path === 'sip') {
    // As a bench step: starts over 8 s, 3 s of warm-up, the window, a second more.
    const scenario = await benchCall(dir, 8000 + 3000 + windowMs + 1000);
    finished = runSipp(scenario, count, port, ear.port, (pid) => (callersPid = pid));
    await new Promise((r) => setTimeout(r, 8000 + 3000));
  } else {
    // The callers stop `seconds` after they connect: 3 s of warm-up and a second to spare.
    const options = { path: 'ws', sessions: count, seconds: Number(seconds) + 4, ws: { base: wsUrl(rig.server.url, ''), apiKey: rig.apiKey, flowId: rig.flowId } };
    const clients = spawnTs('./phone-load-clients.ts', [JSON.stringify(options)]);
    callersPid = clients.pid!;
    const out = lines(clients);
    await out.next(); // every caller connected
    await new Promise((r) => setTimeout(r, 3000));
    finished = out.next();
  }
  ear.take();
  const gc = new GCProfiler();
  gc.start();
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  const lateBefore = AudioOut.lateFrames;
  const cpuBefore = process.cpuUsage();
  const threadsBefore = threadCpu();
  const callersBefore = processTicks(callersPid);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, windowMs));
  const wall = performance.now() - t0;
  const callers = processShare(callersBefore, processTicks(callersPid), wall);
  const cpu = process.cpuUsage(cpuBefore);
  const threads = threadCpuReport(threadsBefore, threadCpu(), wall);
  lag.disable();
  const late = AudioOut.lateFrames - lateBefore;
  const profile = gc.stop();
  const heard = ear.take();
  // Allocated between collections: each one's heap before it, less the heap after the one before.
  let allocated = 0;
  let pauseMs = 0;
  let after: number | null = null;
  for (const s of profile.statistics) {
    if (after !== null) allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - after);
    after = s.afterGC.heapStatistics.usedHeapSize;
    pauseMs += s.cost / 1000;
  }
  const callSeconds = (count * wall) / 1000;
  const gaps = heard.reduce((sum, s) => sum + s.gaps, 0);
  process.stdout.write(
    `${path} ${count} × ${seconds} s: server CPU ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(1)}% of a core (${threads}); ` +
      `callers' process ${callers}; GC ${profile.statistics.length} collections, ${pauseMs.toFixed(0)} ms paused, ` +
      `${(allocated / 1024 / callSeconds).toFixed(0)} KiB allocated per call-second; lag p99 ${(lag.percentile(99) / 1e6).toFixed(1)} max ${(lag.max / 1e6).toFixed(1)} ms; ` +
      `late frames ${late}; ${path === 'sip' ? `${heard.length} RTP streams, ${gaps} gaps > 60 ms; ` : ''}load ${os.loadavg()[0]!.toFixed(1)}\n`,
  );
  await finished;
} finally {
  await ear.close();
  await rig.close();
  await rm(dir, { recursive: true, force: true });
}
process.exit(0);
