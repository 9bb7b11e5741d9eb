// WebRTC figures, measured in one run on this machine:
// - offer → connected on loopback (client side: POST /offer until the peer connection connects);
// - server CPU per WebRTC session (Opus decode + encode, SRTP, the reorder buffer, VAD, the
//   engine), from process.cpuUsage over a window with 5 callers talking, divided by 5;
// - the number of concurrent real-time WebRTC sessions the server process holds with event-loop
//   lag p99 < 20 ms and no late frames (target ≥ 15). Callers (werift peers streaming Opus speech
//   in real time) and the provider fakes run in child processes.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';

export async function run(): Promise<BenchRow[]> {
  const { server, apiKey, flowId, close } = await startLoadRig();
  const rows: BenchRow[] = [];
  try {
    const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
    let held = 0;
    const allConnect: number[] = [];
    for (const sessions of [5, 10, 15, 20, 25, 30]) {
      const clients = spawnTs('./webrtc-load-clients.ts', [server.url, apiKey, flowId, String(sessions), String(seconds)]);
      const out = lines(clients);
      const connected = JSON.parse(await out.next()) as { connectMs: number[] };
      allConnect.push(...connected.connectMs);
      await new Promise((r) => setTimeout(r, 3000)); // greetings, first turns
      const lag = monitorEventLoopDelay({ resolution: 5 });
      lag.enable();
      const lateBefore = AudioOut.lateFrames;
      const cpuBefore = process.cpuUsage();
      const windowStart = performance.now();
      const done = JSON.parse(await out.next()) as { failures: number; received: number; connected: number };
      const windowMs = performance.now() - windowStart;
      const cpu = process.cpuUsage(cpuBefore);
      lag.disable();
      const late = AudioOut.lateFrames - lateBefore;
      const p99 = lag.percentile(99) / 1e6;
      const ok = p99 < 20 && late === 0 && done.failures === 0 && done.connected === sessions;
      const cpuShare = (cpu.user + cpu.system) / 1000 / windowMs; // cores busy in the server process
      if (sessions === 5) {
        rows.push({ name: 'server CPU per WebRTC session', value: `${((cpuShare / sessions) * 100).toFixed(1)} % of a core`, how: `process.cpuUsage of the server process over ${((windowMs) / 1000).toFixed(0)} s with 5 callers talking, ÷ 5 (Opus, SRTP, VAD, engine, flite's worker thread)` });
      }
      rows.push({
        name: `${sessions} WebRTC sessions`,
        value: `lag p99 ${p99.toFixed(1)} ms; ${late} late frames; ${(cpuShare * 100).toFixed(0)} % CPU; ${done.received} RTP packets to callers${ok ? '' : ' ✗'}`,
        how: `${seconds} s of real-time Opus from werift callers; measured after 3 s`,
      });
      await new Promise((r) => setTimeout(r, 2000));
      if (!ok) break;
      held = sessions;
    }
    allConnect.sort((a, b) => a - b);
    rows.unshift({ name: 'offer → connected on loopback', value: `${percentile(allConnect, 50).toFixed(0)} ms p50, ${percentile(allConnect, 95).toFixed(0)} ms p95`, how: `${allConnect.length} werift peers, POST /offer to connectionState connected, client side` });
    rows.push({ name: 'WebRTC sessions held by the server process', value: `${held}`, target: '≥ 15 per core', how: 'largest count above with lag p99 < 20 ms and no late frames' });
  } finally {
    await close();
  }
  return rows;
}
