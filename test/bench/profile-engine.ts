// Not a bench: runs N real-time WebSocket sessions against an in-process server for S seconds,
// so `node --cpu-prof --import tsx test/bench/profile-engine.ts N S` shows where a session's CPU
// goes. VOXFLOW_BENCH_TTS=openai uses the hosted-style fake TTS. Prints the window's CPU per thread.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { wsUrl } from '../support/voice-client.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';
import { threadCpu, threadCpuReport } from './thread-cpu.ts';

const [sessions = '10', seconds = '15'] = process.argv.slice(2);
const { server, apiKey, flowId, close } = await startLoadRig({ tts: process.env.VOXFLOW_BENCH_TTS === 'openai' ? 'openai' : 'flite' });
const clients = spawnTs('./engine-load-clients.ts', [wsUrl(server.url, ''), apiKey, flowId, sessions, seconds]);
const out = lines(clients);
await out.next(); // all connected
await new Promise((r) => setTimeout(r, 3000));
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
const lateBefore = AudioOut.lateFrames;
const cpuBefore = process.cpuUsage();
const threadsBefore = threadCpu();
const t0 = performance.now();
const summary = await out.next();
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpuBefore);
const threads = threadCpuReport(threadsBefore, threadCpu(), wall);
lag.disable();
process.stdout.write(
  `${summary}\nserver CPU ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(1)}% of a core (${threads}); lag p50 ${(lag.percentile(50) / 1e6).toFixed(1)} p99 ${(lag.percentile(99) / 1e6).toFixed(1)} max ${(lag.max / 1e6).toFixed(1)} ms; late frames ${AudioOut.lateFrames - lateBefore}\n`,
);
await close();
process.exit(0);
