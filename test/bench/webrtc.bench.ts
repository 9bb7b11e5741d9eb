// WebRTC figures, measured in one run on this machine:
// - offer → connected on loopback (client side: POST /offer until the peer connection connects),
//   for 5 callers connecting at once to an idle server;
// - server CPU per WebRTC session (Opus decode + encode, SRTP, the reorder buffer, VAD, the
//   engine), from process.cpuUsage over a window with 5 callers talking, divided by 5;
// - the number of concurrent real-time WebRTC sessions the server process holds with event-loop
//   lag p99 < 20 ms, no late frames and no underruns, to the ceiling (the ladder of load-rig.ts;
//   target ≥ 40 per core with a hosted-style TTS, ≥ 15 with flite), once with flite
//   synthesizing in the server process and once with a hosted-style TTS. Callers (werift peers
//   streaming Opus speech in real time) and the provider fakes run in child processes.
import { percentile, type BenchRow } from './bench-kit.ts';
import { ladderStepSeconds, lines, measureStep, sessionsHeld, spawnTs, startLoadRig } from './load-rig.ts';

async function webrtcSessions(tts: 'flite' | 'openai'): Promise<BenchRow[]> {
  const { server, apiKey, flowId, close } = await startLoadRig({ tts });
  const speech = tts === 'flite' ? 'flite TTS in the server process' : 'hosted-style TTS (fake OpenAI speech in the fakes process)';
  const seconds = ladderStepSeconds();
  const first: BenchRow[] = [];
  try {
    const rows = await sessionsHeld(
      `WebRTC sessions, ${tts}`,
      async (sessions) => {
        let connectMs: number[] = [];
        const result = await measureStep(async () => {
          const clients = spawnTs('./webrtc-load-clients.ts', [server.url, apiKey, flowId, String(sessions), String(seconds)]);
          const out = lines(clients);
          connectMs = (JSON.parse(await out.next()) as { connectMs: number[] }).connectMs.sort((a, b) => a - b);
          await new Promise((r) => setTimeout(r, 3000)); // greetings, first turns
          return async () => {
            const done = JSON.parse(await out.next()) as { failures: number; received: number; connected: number; voiceToVoice: number[] };
            return { healthy: done.failures === 0 && done.connected === sessions, voiceToVoice: done.voiceToVoice, extra: `${done.connected} of ${sessions} peers connected, ${done.received} RTP packets to callers` };
          };
        });
        if (sessions === 5 && first.length === 0) {
          first.push({ name: `offer → connected on loopback, ${tts}`, value: `${percentile(connectMs, 50).toFixed(0)} ms p50, ${connectMs.at(-1)!.toFixed(0)} ms max`, how: `${connectMs.length} werift peers connecting at once to an idle server, POST /offer to connectionState connected, client side` });
          first.push({ name: `server CPU per WebRTC session, ${tts}`, value: `${((result.cores / sessions) * 100).toFixed(1)} % of a core`, how: `process.cpuUsage of the server process over the last ${seconds - 3} s of 5 callers talking, ÷ 5 (Opus, SRTP, VAD, engine${tts === 'flite' ? ", flite's worker thread" : ''})` });
        }
        await new Promise((r) => setTimeout(r, 2000)); // let the peers close
        return result;
      },
      { step: `${seconds} s of real-time Opus from werift callers, measured after 3 s; ${speech}`, held: speech, target: tts === 'openai' ? '≥ 40 per core' : '≥ 15 per core' },
    );
    return [...first, ...rows];
  } finally {
    await close();
  }
}

export async function run(): Promise<BenchRow[]> {
  return [...(await webrtcSessions('flite')), ...(await webrtcSessions('openai'))];
}
