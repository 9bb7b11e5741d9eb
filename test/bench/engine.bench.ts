// Voice engine figures, measured in one run on this machine:
// 1. server_ms per turn (voice_to_voice minus endpointing, STT, model TTFT and TTS
//    TTFB) with instant provider fakes, for typed turns and for spoken turns; targets p50 ≤ 15 ms,
//    p95 ≤ 40 ms.
// 2. Concurrent real-time sessions the server process holds, to the ceiling (the ladder of
//    load-rig.ts): every caller streams 100 ms audio chunks in real time and the agent answers at
//    length, while the server's event-loop delay (p99 < 20 ms), its late output frames and
//    underruns (none) and its CPU are watched. Fakes and
//    callers run in child processes (at a lower priority: they stand in for other machines), so
//    the server process's work is the server's alone.
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { startVoiceRig } from '../support/voice-server.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { ladderStepSeconds, lines, measureStep, sessionsHeld, spawnTs, startLoadRig, type LoadRig } from './load-rig.ts';

async function serverMsPerTurn(): Promise<BenchRow[]> {
  const rig = await startVoiceRig({
    rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello.' } }, { respond: { text: 'Sure, here is my answer to that.' } }],
    deepgram: { transcribe: () => 'Is it an animal?' },
  });
  try {
    const client = await connectVoice(wsUrl(rig.server.url, "/ws?mode=assistant"), { "x-service-key": rig.account.apiKey });
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
  const seconds = ladderStepSeconds();
  try {
    return await sessionsHeld(
      `real-time sessions, ${tts}`,
      async (sessions) => {
        const result = await measureStep(async () => {
          const clients = spawnTs('./engine-load-clients.ts', [wsUrl(server.url, ''), apiKey, flowId, String(sessions), String(seconds)]);
          const out = lines(clients);
          await out.next(); // every caller connected
          // Measure once every caller is talking (the first 3 s are warm-up: greetings, first turns).
          await new Promise((r) => setTimeout(r, 3000));
          return async () => {
            const summary = JSON.parse(await out.next()) as { opened: number; failures: number; framesReceived: number; voiceToVoice: number[] };
            return { healthy: summary.failures === 0 && summary.opened === sessions, voiceToVoice: summary.voiceToVoice, extra: `${summary.framesReceived} agent frames out` };
          };
        });
        await new Promise((r) => setTimeout(r, 1500)); // let the sessions end
        return result;
      },
      { step: `${seconds} s (measured from 3 s after all connected), callers streaming 100 ms chunks in real time, ${speech}`, held: speech, target: tts === 'openai' ? '≥ 60 per core' : '≥ 15 per core' },
    );
  } finally {
    await close();
  }
}

/** The same sessions on one or two servers, alternated A/B/A/B: the server's CPU for each (mean of two) and its late or underrun frames. */
async function alternatingCpu(
  sessions: number,
  seconds: number,
  sides: Record<'a' | 'b', { server: LoadRig['server']; apiKey: string; flowId: string; mode: string }>,
  /** Told which side is measured next, before its callers start. */
  onSide: (side: 'a' | 'b') => void = () => {},
) {
  const cores = { a: [] as number[], b: [] as number[] };
  const late = { a: 0, b: 0 };
  for (const side of ['a', 'b', 'a', 'b'] as const) {
    const { server, apiKey, flowId, mode } = sides[side];
    onSide(side);
    const result = await measureStep(async () => {
      const clients = spawnTs('./engine-load-clients.ts', [wsUrl(server.url, ''), apiKey, flowId, String(sessions), String(seconds), mode]);
      const out = lines(clients);
      await out.next();
      await new Promise((r) => setTimeout(r, 3000));
      return async () => {
        const summary = JSON.parse(await out.next()) as { opened: number; failures: number; framesReceived: number; voiceToVoice: number[] };
        return { healthy: summary.failures === 0 && summary.opened === sessions, voiceToVoice: summary.voiceToVoice, extra: '' };
      };
    });
    cores[side].push(result.cores);
    late[side] += result.late + result.underruns;
    await new Promise((r) => setTimeout(r, 1500));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { a: mean(cores.a), b: mean(cores.b), lateA: late.a, lateB: late.b };
}

/**
 * What recording costs: the server's CPU for the same 20 hosted-TTS sessions without
 * and with `record=1`, each run twice in alternation; sessions per core scale with 1 / CPU, so
 * the ratio of the CPU figures is the change in that figure.
 */
async function recordingCost(): Promise<BenchRow[]> {
  const { server, apiKey, flowId, close } = await startLoadRig({ tts: 'openai' });
  const sessions = 20;
  const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
  try {
    const cpu = await alternatingCpu(sessions, seconds, { a: { server, apiKey, flowId, mode: 'plain' }, b: { server, apiKey, flowId, mode: 'record' } });
    const change = (cpu.b / cpu.a - 1) * 100;
    return [
      {
        name: `recording: server CPU at ${sessions} sessions, without → with`,
        value: `${(cpu.a * 100).toFixed(0)} % → ${(cpu.b * 100).toFixed(0)} % of a core (${change >= 0 ? '+' : ''}${change.toFixed(1)} %); late or underrun frames ${cpu.lateA} → ${cpu.lateB}`,
        target: '≤ +10 %',
        how: `${sessions} real-time sessions, hosted-style TTS, ${seconds} s windows, plain/record/plain/record, mean of two each; every server thread's CPU`,
      },
    ];
  } finally {
    await close();
  }
}

/**
 * What metrics and tracing cost: the same 20 hosted-TTS sessions on two servers side by side, one
 * with neither, one with /metrics scraped every second and every call traced (always on) to an
 * OTLP/HTTP endpoint that takes the spans; alternated off/on/off/on. Sessions per core scale with
 * 1 / CPU, so "off CPU ÷ on CPU" is sessions per core with them on as a share of without. The
 * scraper and the endpoint run in a process of their own, as Prometheus and a collector run on
 * other machines: what is measured is the server's side of a scrape and an export, not the
 * client's (an undici fetch of the 60 kB page costs the fetching process more than the server's
 * answer costs it).
 */
async function observabilityCost(): Promise<BenchRow[]> {
  const sink = spawnTs('./observability-sinks-process.ts', ['sink']);
  const collectorUrl = await lines(sink).next();
  const token = 'bench-metrics-token';
  // One after the other: two starting at once on a loaded machine ran past Fastify's plugin timeout.
  const off = await startLoadRig({ tts: 'openai' }).catch((error: unknown) => {
    sink.kill();
    throw error;
  });
  const on = await startLoadRig({ tts: 'openai', config: { observability: { metricsToken: token, otelEndpoint: collectorUrl, otelTracesSampler: 'always_on' } } }).catch(async (error: unknown) => {
    await off.close();
    sink.kill();
    throw error;
  });
  // Prometheus scrapes the server with metrics only while it is the one measured: both servers
  // live in this process, whose CPU is what is measured.
  let scraper: ReturnType<typeof spawnTs> | null = null;
  const scrape = (side: 'a' | 'b') => {
    scraper?.kill();
    scraper = side === 'b' ? spawnTs('./observability-sinks-process.ts', ['scrape', `${on.server.url}/metrics`, token]) : null;
  };
  const sessions = 20;
  const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
  try {
    const cpu = await alternatingCpu(sessions, seconds, { a: { ...off, mode: 'plain' }, b: { ...on, mode: 'plain' } }, scrape);
    return [
      {
        name: `metrics and tracing: sessions per core with them on ÷ off, at ${sessions} sessions`,
        value: `${(cpu.a / cpu.b).toFixed(3)} (server CPU ${(cpu.a * 100).toFixed(1)} % off → ${(cpu.b * 100).toFixed(1)} % on, of a core); late or underrun frames ${cpu.lateA} → ${cpu.lateB}`,
        target: '≥ 0.95',
        how: `two servers, ${sessions} real-time sessions on one at a time, hosted-style TTS, ${seconds} s windows, off/on/off/on, mean of two each; on: /metrics scraped every 1 s (15× Prometheus' default rate), every call traced to an OTLP/HTTP sink, both from a process of their own`,
      },
    ];
  } finally {
    (scraper as ReturnType<typeof spawnTs> | null)?.kill();
    await Promise.all([off.close(), on.close()]);
    sink.kill();
  }
}

export async function run(): Promise<BenchRow[]> {
  if (process.env.VOXFLOW_BENCH_ONLY === 'recording') return recordingCost();
  if (process.env.VOXFLOW_BENCH_ONLY === 'observability') return observabilityCost();
  if (process.env.VOXFLOW_BENCH_ONLY === 'ladders') return [...(await concurrentSessions('openai')), ...(await concurrentSessions('flite'))];
  return [...(await serverMsPerTurn()), ...(await concurrentSessions('flite')), ...(await concurrentSessions('openai')), ...(await recordingCost()), ...(await observabilityCost())];
}
