// Voice engine figures, measured in one run on this machine:
// 1. server_ms per turn (DESIGN §5: voice_to_voice minus endpointing, STT, model TTFT and TTS
//    TTFB) with instant provider fakes, for typed turns and for spoken turns; targets p50 ≤ 15 ms,
//    p95 ≤ 40 ms.
// 2. Concurrent real-time sessions the server process holds: every caller streams 100 ms audio
//    chunks in real time and the agent answers at length, while the server's event-loop delay
//    (p99 < 20 ms), its late output frames and underruns (none) and its CPU are watched. Fakes and
//    callers run in child processes (at a lower priority: they stand in for other machines), so
//    the server process's work is the server's alone.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { startVoiceRig } from '../support/voice-server.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { lines, spawnTs, startLoadRig } from './load-rig.ts';

async function serverMsPerTurn(): Promise<BenchRow[]> {
  const rig = await startVoiceRig({
    rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello.' } }, { respond: { text: 'Sure, here is my answer to that.' } }],
    deepgram: { transcribe: () => 'Is it an animal?' },
  });
  try {
    const client = await connectVoice(wsUrl(rig.server.url, `/ws?mode=assistant&api_key=${rig.account.apiKey}`));
    await client.waitFor('agent_stopped_speaking', undefined, 20_000);
    const typed: number[] = [];
    for (let i = 0; i < 40; i++) {
      const before = client.ofType('metrics').length;
      client.send({ type: 'text', text: `Question number ${i}?` });
      await client.waitFor('agent_stopped_speaking', () => client.ofType('metrics').length > before, 20_000);
      typed.push(client.ofType('metrics').at(-1)!.server_ms!);
    }
    const spoken: number[] = [];
    for (let i = 0; i < 15; i++) {
      const before = client.ofType('metrics').length;
      await client.speak('Is it an animal?', { speed: 4, silenceAfterMs: 800 });
      await client.waitFor('agent_stopped_speaking', () => client.ofType('metrics').length > before, 20_000);
      const m = client.ofType('metrics').at(-1)!;
      if (m.stt_ms !== null) spoken.push(m.server_ms!);
    }
    client.close();
    typed.sort((a, b) => a - b);
    spoken.sort((a, b) => a - b);
    return [
      { name: 'server_ms per typed turn', value: `${percentile(typed, 50)} ms p50, ${percentile(typed, 95)} ms p95`, target: 'p50 ≤ 15, p95 ≤ 40', how: `${typed.length} typed turns over WebSocket; fake LLM/STT answer at once; flite TTS` },
      { name: 'server_ms per spoken turn', value: `${percentile(spoken, 50)} ms p50, ${percentile(spoken, 95)} ms p95`, target: 'p50 ≤ 15, p95 ≤ 40', how: `${spoken.length} spoken turns (flite speech → Silero → Deepgram fake), sent at 4× real time` },
    ];
  } finally {
    await rig.close();
  }
}

async function concurrentSessions(tts: 'flite' | 'openai'): Promise<BenchRow[]> {
  const { server, apiKey, flowId, close } = await startLoadRig({ tts });
  const speech = tts === 'flite' ? 'flite TTS in the server process' : 'hosted-style TTS (fake OpenAI speech in the fakes process)';
  const rows: BenchRow[] = [];
  try {
    const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
    let held = 0;
    let heldCores = 0;
    for (const sessions of [5, 10, 15, 20, 25, 30, 40, 50, 60]) {
      const lag = monitorEventLoopDelay({ resolution: 5 });
      const clients = spawnTs('./engine-load-clients.ts', [wsUrl(server.url, ''), apiKey, flowId, String(sessions), String(seconds)]);
      const out = lines(clients);
      await out.next(); // every caller connected
      // Measure once every caller is talking (the first 3 s are warm-up: greetings, first turns).
      await new Promise((r) => setTimeout(r, 3000));
      const lateBefore = AudioOut.lateFrames;
      const underrunsBefore = AudioOut.underrunFrames;
      const cpuBefore = process.cpuUsage();
      const windowStart = performance.now();
      lag.enable();
      const summary = JSON.parse(await out.next()) as { opened: number; failures: number; framesReceived: number };
      lag.disable();
      const cpu = process.cpuUsage(cpuBefore);
      const cores = (cpu.user + cpu.system) / 1000 / (performance.now() - windowStart); // every thread of the server process
      const late = AudioOut.lateFrames - lateBefore;
      const underruns = AudioOut.underrunFrames - underrunsBefore;
      const p99 = lag.percentile(99) / 1e6;
      const ok = p99 < 20 && late === 0 && underruns === 0 && summary.failures === 0 && summary.opened === sessions;
      rows.push({
        name: `${sessions} real-time sessions, ${tts}`,
        value: `lag p99 ${p99.toFixed(1)} ms, max ${(lag.max / 1e6).toFixed(1)} ms; ${late} late, ${underruns} underrun frames; ${(cores * 100).toFixed(0)} % CPU; ${summary.framesReceived} agent frames out${ok ? '' : ' ✗'}`,
        how: `${seconds} s (measured from 3 s after all connected), callers streaming 100 ms chunks in real time, ${speech}; lag, late frames (sent after their play time), underruns (mid-reply audio not ready by then) and CPU (all threads, in cores) of the server process`,
      });
      await new Promise((r) => setTimeout(r, 1500)); // let the sessions end
      if (!ok) break;
      held = sessions;
      heldCores = cores;
    }
    rows.push({
      name: `sessions held, ${tts}`,
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
  return [...(await serverMsPerTurn()), ...(await concurrentSessions('flite')), ...(await concurrentSessions('openai'))];
}
