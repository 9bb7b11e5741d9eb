// Not a bench: N real-time WebRTC callers (werift, in a child process) against an in-process
// server for S seconds, so `node --cpu-prof --import tsx test/bench/profile-webrtc.ts N S` shows
// where a WebRTC session's CPU goes. VOXFLOW_BENCH_TTS=openai uses the hosted-style fake TTS.
// Prints the window's CPU per thread.
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';
import { processShare, processTicks, threadCpu, threadCpuReport } from './thread-cpu.ts';

const [sessions = '5', seconds = '15'] = process.argv.slice(2);
const { server, apiKey, flowId, close } = await startLoadRig({ tts: process.env.VOXFLOW_BENCH_TTS === 'openai' ? 'openai' : 'flite' });
const clients = spawnTs('./webrtc-load-clients.ts', [server.url, apiKey, flowId, sessions, seconds]);
const out = lines(clients);
await out.next(); // all connected
await new Promise((r) => setTimeout(r, 3000));
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
const lateBefore = AudioOut.lateFrames;
const cpuBefore = process.cpuUsage();
const threadsBefore = threadCpu();
const callersBefore = processTicks(clients.pid);
const t0 = performance.now();
const done = await out.next();
const wall = performance.now() - t0;
const callers = processShare(callersBefore, processTicks(clients.pid), wall);
const cpu = process.cpuUsage(cpuBefore);
const threads = threadCpuReport(threadsBefore, threadCpu(), wall);
lag.disable();
process.stdout.write(
  `${done}\nserver CPU ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(1)}% of a core (${threads}); lag p99 ${(lag.percentile(99) / 1e6).toFixed(1)} max ${(lag.max / 1e6).toFixed(1)} ms; late frames ${AudioOut.lateFrames - lateBefore}; callers' process ${callers}; load ${os.loadavg()[0]!.toFixed(1)}\n`,
);
await close();
process.exit(0);
