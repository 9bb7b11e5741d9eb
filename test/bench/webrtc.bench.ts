// WebRTC figures, measured in one run on this machine:
// - offer → connected on loopback (client side: POST /offer until the peer connection connects),
//   for 5 callers connecting at once to an idle server;
// - server CPU per WebRTC session (Opus decode + encode, SRTP, the reorder buffer, VAD, the
//   engine), from process.cpuUsage over a window with 5 callers talking, divided by 5;
// - the number of concurrent real-time WebRTC sessions the server process holds with event-loop
//   lag p99 < 20 ms, no late frames and no underruns (target ≥ 15 per core), once with flite
//   synthesizing in the server process and once with a hosted-style TTS. Callers (werift peers
//   streaming Opus speech in real time) and the provider fakes run in child processes.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';

async function sessionsHeld(tts: 'flite' | 'openai'): Promise<BenchRow[]> {
  const { server, apiKey, flowId, close } = await startLoadRig({ tts });
  const speech = tts === 'flite' ? 'flite TTS in the server process' : 'hosted-style TTS (fake OpenAI speech in the fakes process)';
  const rows: BenchRow[] = [];
  try {
    const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
    let held = 0;
    let heldCores = 0;
    for (const sessions of [5, 10, 15, 20, 25, 30]) {
      const clients = spawnTs('./webrtc-load-clients.ts', [server.url, apiKey, flowId, String(sessions), String(seconds)]);
      const out = lines(clients);
      const connected = JSON.parse(await out.next()) as { connectMs: number[] };
      if (sessions === 5 && tts === 'flite') {
        const connect = connected.connectMs.sort((a, b) => a - b);
        rows.push({ name: 'offer → connected on loopback', value: `${percentile(connect, 50).toFixed(0)} ms p50, ${connect.at(-1)!.toFixed(0)} ms max`, how: `${connect.length} werift peers connecting at once to an idle server, POST /offer to connectionState connected, client side` });
      }
      await new Promise((r) => setTimeout(r, 3000)); // greetings, first turns
      const lag = monitorEventLoopDelay({ resolution: 5 });
      lag.enable();
      const lateBefore = AudioOut.lateFrames;
      const underrunsBefore = AudioOut.underrunFrames;
      const cpuBefore = process.cpuUsage();
      const windowStart = performance.now();
      const done = JSON.parse(await out.next()) as { failures: number; received: number; connected: number };
      const windowMs = performance.now() - windowStart;
      const cpu = process.cpuUsage(cpuBefore);
      lag.disable();
      const late = AudioOut.lateFrames - lateBefore;
      const underruns = AudioOut.underrunFrames - underrunsBefore;
      const p99 = lag.percentile(99) / 1e6;
      const ok = p99 < 20 && late === 0 && underruns === 0 && done.failures === 0 && done.connected === sessions;
      const cores = (cpu.user + cpu.system) / 1000 / windowMs; // every thread of the server process
      if (sessions === 5) {
        rows.push({ name: `server CPU per WebRTC session, ${tts}`, value: `${((cores / sessions) * 100).toFixed(1)} % of a core`, how: `process.cpuUsage of the server process over ${(windowMs / 1000).toFixed(0)} s with 5 callers talking, ÷ 5 (Opus, SRTP, VAD, engine${tts === 'flite' ? ", flite's worker thread" : ''})` });
      }
      rows.push({
        name: `${sessions} WebRTC sessions, ${tts}`,
        value: `lag p99 ${p99.toFixed(1)} ms, max ${(lag.max / 1e6).toFixed(1)} ms; ${late} late, ${underruns} underrun frames; ${(cores * 100).toFixed(0)} % CPU; ${done.received} RTP packets to callers${ok ? '' : ' ✗'}`,
        how: `${seconds} s of real-time Opus from werift callers, measured after 3 s; ${speech}; late = sent after its play time, underrun = mid-reply audio not ready by then; CPU of every server thread, in cores`,
      });
      await new Promise((r) => setTimeout(r, 2000));
      if (!ok) break;
      held = sessions;
      heldCores = cores;
    }
    rows.push({
      name: `WebRTC sessions held, ${tts}`,
      value: held === 0 ? '0' : `${held}, using ${(heldCores * 100).toFixed(0)} % of a core: ${(held / Math.max(heldCores, 1)).toFixed(0)} per core`,
      target: '≥ 15 per core',
      how: `largest count above with lag p99 < 20 ms, no late frames and no underruns; per core = held ÷ the larger of 1 and the cores the server process used; ${speech}`,
    });
  } finally {
    await close();
  }
  return rows;
}

export async function run(): Promise<BenchRow[]> {
  return [...(await sessionsHeld('flite')), ...(await sessionsHeld('openai'))];
}
