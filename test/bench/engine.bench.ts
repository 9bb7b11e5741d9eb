// Voice engine figures, measured in one run on this machine:
// 1. server_ms per turn (voice_to_voice minus endpointing, STT, model TTFT and TTS
//    TTFB) with instant provider fakes, for typed turns and for spoken turns; targets p50 ≤ 15 ms,
//    p95 ≤ 40 ms.
// 2. Concurrent real-time sessions the server process holds: every caller streams 100 ms audio
//    chunks in real time and the agent answers at length, while the server's event-loop delay
//    (p99 < 20 ms), its late output frames and underruns (none) and its CPU are watched. Fakes and
//    callers run in child processes (at a lower priority: they stand in for other machines), so
//    the server process's work is the server's alone.
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { startVoiceRig } from '../support/voice-server.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { lines, measureStep, sessionsHeld, spawnTs, startLoadRig } from './load-rig.ts';

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
  const seconds = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
  try {
    return await sessionsHeld(
      `real-time sessions, ${tts}`,
      [5, 10, 15, 20, 25, 30, 40, 50, 60],
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
      { step: `${seconds} s (measured from 3 s after all connected), callers streaming 100 ms chunks in real time, ${speech}`, held: speech },
    );
  } finally {
    await close();
  }
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
  const cores = { plain: [] as number[], record: [] as number[] };
  const late = { plain: 0, record: 0 };
  try {
    for (const mode of ['plain', 'record', 'plain', 'record'] as const) {
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
      cores[mode].push(result.cores);
      late[mode] += result.late + result.underruns;
      await new Promise((r) => setTimeout(r, 1500));
    }
  } finally {
    await close();
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const change = (mean(cores.record) / mean(cores.plain) - 1) * 100;
  return [
    {
      name: `recording: server CPU at ${sessions} sessions, without → with`,
      value: `${(mean(cores.plain) * 100).toFixed(0)} % → ${(mean(cores.record) * 100).toFixed(0)} % of a core (${change >= 0 ? '+' : ''}${change.toFixed(1)} %); late or underrun frames ${late.plain} → ${late.record}`,
      target: '≤ +10 %',
      how: `${sessions} real-time sessions, hosted-style TTS, ${seconds} s windows, plain/record/plain/record, mean of two each; every server thread's CPU`,
    },
  ];
}

export async function run(): Promise<BenchRow[]> {
  if (process.env.VOXFLOW_BENCH_ONLY === 'recording') return recordingCost();
  return [...(await serverMsPerTurn()), ...(await concurrentSessions('flite')), ...(await concurrentSessions('openai')), ...(await recordingCost())];
}
