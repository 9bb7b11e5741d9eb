// Phone calls against WebSocket sessions, measured in one run on this machine, both with a
// hosted-style voice (fake OpenAI speech in the fakes' process, as `bench engine` does):
// 1. What the phone path's audio work costs per call-second, timed in this process: G.711 and
//    the resamplers alone, and the bridge's whole per-frame work (reading Twilio's media message,
//    decoding, resampling up; resampling down, encoding, writing the message); and the audio its
//    resamplers hold back, which is what it adds to voice-to-voice besides that CPU time.
// VOXFLOW_BENCH_ONLY=bridge runs section 1 alone, =fixed section 3, =ladders section 2.
// 2. Calls held per core over each path, each the ladder of load-rig.ts: it climbs until a step
//    fails, then bisects to the ceiling. WebSocket callers and a fake Twilio's calls are paced
//    alike, one 20 ms frame every 20 ms, so only the path differs.
// 3. At a fixed count, the two paths in turn (twice each): the server CPU one phone call adds over
//    a WebSocket session, and the voice-to-voice the phone path adds, timed by the callers (last
//    frame of the question sent → first agent audio received).
import { decodeG711, encodeG711 } from '../../server/audio/g711.ts';
import { StreamingResampler } from '../../server/audio/resampler.ts';
import { twilio } from '../../server/transports/carriers/twilio/index.ts';
import { PhoneMediaBridge } from '../../server/transports/phone/media-bridge.ts';
import { speechLikeAudio } from '../fakes/synthetic-audio.ts';
import { startFakeCarrierApi } from '../fakes/carriers/rest-server.ts';
import { carrierMessages } from '../fakes/carriers/stream-messages.ts';
import { wsUrl } from '../support/voice-client.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { ladderStepSeconds, ladderToCeiling, lines, measureStep, spawnTs, startLoadRig, type Ceiling, type LoadRig, type StepResult } from './load-rig.ts';

const SECONDS = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 20);
const FIXED_CALLS = Number(process.env.VOXFLOW_BENCH_PHONE_CALLS ?? 20);
const TWILIO_SID = 'AC0123456789abcdef0123456789abcdef';
const TWILIO_TOKEN = 'twilio-auth-token-bench';
const BUSINESS = '+15550100002';
const CALLER = '+15550100001';

type Path = 'ws' | 'twilio';

interface PhoneLine {
  webhookUrl: string;
}

const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const percentOfCore = (cpuMsPerSecond: number) => `${(cpuMsPerSecond / 10).toFixed(3)} % of a core`;

/** CPU milliseconds (this process, user + system) that `work` takes; the server is idle meanwhile. */
function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Section 1: a minute of one call's audio, both ways, through the phone path's own code. */
export function bridgeCost(): BenchRow[] {
  const seconds = 60;
  const frames = (seconds * 1000) / 20;
  // Speech-like audio both ways (the fake voice's tone bursts), so nothing is all zeros.
  const wide = speechLikeAudio(Array.from({ length: 1200 }, () => 'word').join(' '), 16000);
  const agentFrames = Array.from({ length: frames }, (_, i) => wide.slice(i * 320, (i + 1) * 320));
  const callerPayloads = agentFrames.map((frame) => encodeG711('mulaw', new StreamingResampler(16000, 8000).process(frame)));
  const messages = carrierMessages('twilio');
  const callerMessages = callerPayloads.map((payload, i) => JSON.stringify(messages.media({ sequence: i + 2, streamId: 'MZ0', chunk: i + 1, timestamp: i * 20, payload })));

  const codec = () =>
    cpuMs(() => {
      const up = new StreamingResampler(8000, 16000);
      const down = new StreamingResampler(16000, 8000);
      const wideOut = new Int16Array(320);
      const narrowOut = new Uint8Array(160);
      let sink = 0;
      for (let i = 0; i < frames; i++) {
        sink += up.process(decodeG711('mulaw', callerPayloads[i]!, new Int16Array(160))).length;
        sink += encodeG711('mulaw', down.process(agentFrames[i]!), narrowOut).length;
      }
      if (sink === 0) wideOut[0] = 1; // keeps the loop's results alive
    });
  const bridge = () =>
    cpuMs(() => {
      let sent = 0;
      const b = new PhoneMediaBridge('mulaw', { media: (bytes) => twilio.mediaMessage('MZ0', bytes, 'mulaw'), mark: (name) => twilio.markMessage('MZ0', name), clear: () => twilio.clearMessage('MZ0') }, (text) => {
        sent += text.length;
      });
      for (let i = 0; i < frames; i++) {
        const message = twilio.parseStreamMessage(callerMessages[i]!);
        if (message.type === 'media') b.callerAudio(message.payload);
        b.agentAudio(agentFrames[i]!);
      }
      if (sent === 0) throw new Error('the bridge sent nothing');
    });
  codec();
  bridge(); // warm-up: compiled code, filter tables
  const codecRuns = Array.from({ length: 7 }, codec);
  const bridgeRuns = Array.from({ length: 7 }, bridge);
  const perSecond = (runs: number[]) => median(runs) / seconds;
  return [
    {
      name: 'phone: μ-law + resampling CPU per call',
      value: `${perSecond(codecRuns).toFixed(2)} ms per call-second: ${percentOfCore(perSecond(codecRuns))} (runs ${Math.min(...codecRuns).toFixed(0)}–${Math.max(...codecRuns).toFixed(0)} ms per minute)`,
      target: '≤ 0.5 % of a core',
      how: 'a minute of one call both ways in this process: decode + 8→16 kHz on 3,000 caller frames, 16→8 kHz + encode on 3,000 agent frames; median of 7 runs; process CPU',
    },
    {
      name: 'phone: the media bridge\'s whole per-frame work per call',
      value: `${perSecond(bridgeRuns).toFixed(2)} ms per call-second: ${percentOfCore(perSecond(bridgeRuns))} (runs ${Math.min(...bridgeRuns).toFixed(0)}–${Math.max(...bridgeRuns).toFixed(0)} ms per minute)`,
      how: 'as above, plus reading each Twilio media message (JSON, base64) and writing each of ours: parseStreamMessage + PhoneMediaBridge.callerAudio / agentAudio',
    },
  ];
}

/**
 * The delay the phone path's own audio work puts on each direction: the resamplers' filters hold
 * back the last few samples of every frame until the next frame comes, so the engine hears the
 * caller stop that much later (on average: the engine's VAD works in frames of its own). Counted as the audio a frame's worth of input has not
 * yet given out, in steady state; deterministic, unlike the callers' clock, which a loaded machine
 * shifts by more than these milliseconds.
 */
export function bridgeDelay(): BenchRow {
  const bridge = new PhoneMediaBridge('mulaw', { media: (bytes) => twilio.mediaMessage('MZ0', bytes, 'mulaw'), mark: () => '', clear: () => '' }, () => {});
  const silence8k = encodeG711('mulaw', new Int16Array(160));
  let wideOut = 0;
  for (let f = 0; f < 50; f++) wideOut += bridge.callerAudio(silence8k)!.length;
  const upDelayMs = (50 * 320 - wideOut) / 16;
  let narrowOut = 0;
  const down = new PhoneMediaBridge('mulaw', { media: (bytes) => ((narrowOut += bytes.length), ''), mark: () => '', clear: () => '' }, () => {});
  for (let f = 0; f < 50; f++) down.agentAudio(new Int16Array(320));
  const downDelayMs = (50 * 160 - narrowOut) / 8;
  return {
    name: 'phone: voice-to-voice the phone path\'s audio work adds',
    value: `${upDelayMs.toFixed(1)} ms: the engine hears the caller stop that much later (engine → caller: ${downDelayMs.toFixed(1)} ms held at each frame's end, but a reply's first frame goes out at once with what it has, so its start is not later)`,
    target: '≤ 5 ms',
    how: "50 frames of 20 ms through PhoneMediaBridge each way: the audio in minus the audio out, in steady state (the resamplers' filter delay); besides this, the path's CPU time per frame (rows above)",
  };
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

interface ClientSummary {
  opened: number;
  failures: number;
  framesReceived: number;
  serverVoiceToVoice: number[];
  clientVoiceToVoice: number[];
  callIds: string[];
  windowFromEpochMs: number;
}

interface PathStep extends StepResult {
  clientVoiceToVoice: number[];
}

/** The engine's voice_to_voice_ms of a phone step's turns, from the calls' timelines (a phone caller gets no events). */
async function phoneServerVoiceToVoice(rig: LoadRig, summary: ClientSummary): Promise<number[]> {
  const { store } = rig.server.app.services;
  const values: number[] = [];
  for (const callId of summary.callIds) {
    const session = await store.sessions.findByCarrierCallId('twilio', callId);
    if (!session) continue;
    const detail = await rig.server.request('GET', `/v1/sessions/${session.id}`, { apiKey: rig.apiKey });
    for (const m of (detail.body?.metrics ?? []) as Array<{ at: number; voice_to_voice_ms?: number | null }>) {
      if (typeof m.voice_to_voice_ms === 'number' && m.at * 1000 >= summary.windowFromEpochMs) values.push(m.voice_to_voice_ms);
    }
  }
  return values;
}

async function runPath(rig: LoadRig, line: PhoneLine, path: Path, sessions: number, seconds = SECONDS): Promise<PathStep> {
  let summary: ClientSummary | null = null;
  const result = await measureStep(async () => {
    const options = {
      path,
      sessions,
      seconds,
      ws: { base: wsUrl(rig.server.url, ''), apiKey: rig.apiKey, flowId: rig.flowId },
      twilio: { webhookUrl: line.webhookUrl, authToken: TWILIO_TOKEN, from: CALLER, to: BUSINESS },
    };
    const clients = spawnTs('./phone-load-clients.ts', [JSON.stringify(options)]);
    const out = lines(clients);
    await out.next(); // every caller connected
    // Measure once every caller is talking (the first 3 s are warm-up: greetings, first turns).
    await new Promise((r) => setTimeout(r, 3000));
    return async () => {
      const s = (summary = JSON.parse(await out.next()) as ClientSummary);
      return { healthy: s.failures === 0 && s.opened === sessions, voiceToVoice: s.serverVoiceToVoice, extra: '' };
    };
  });
  await new Promise((r) => setTimeout(r, 2500)); // let the sessions end (and their timelines be written)
  const s = summary!;
  const client = s.clientVoiceToVoice;
  return {
    ...result,
    // A phone caller gets no events: its turns' figures are read from the timelines, after the window.
    voiceToVoice: path === 'ws' ? result.voiceToVoice : await phoneServerVoiceToVoice(rig, s),
    extra: `${s.framesReceived} agent frames out; callers' own voice-to-voice p50 ${client.length > 0 ? median(client).toFixed(0) : '–'} ms over ${client.length} turns`,
    clientVoiceToVoice: client,
  };
}

async function ladder(rig: LoadRig, line: PhoneLine, path: Path): Promise<Ceiling> {
  const seconds = ladderStepSeconds();
  return ladderToCeiling({
    label: path === 'ws' ? 'WebSocket sessions, 20 ms frames' : 'Twilio calls, μ-law 8 kHz',
    stepHow: `${seconds} s (measured from 3 s after all connected), callers sending one 20 ms frame every 20 ms, hosted-style TTS`,
    heldHow: 'hosted-style TTS (fake OpenAI speech in the fakes process)',
    runStep: (sessions) => runPath(rig, line, path, sessions, seconds),
  });
}

/**
 * One step of WebSocket sessions paced as a carrier paces a call (one 20 ms PCM16 frame every
 * 20 ms): the baseline a phone or SIP ladder is compared with.
 */
export function pacedWebSocketStep(rig: LoadRig, sessions: number, seconds: number): Promise<StepResult> {
  return runPath(rig, { webhookUrl: '' }, 'ws', sessions, seconds);
}

async function fixedCount(rig: LoadRig, line: PhoneLine): Promise<BenchRow[]> {
  const cores: Record<Path, number[]> = { ws: [], twilio: [] };
  const client: Record<Path, number[]> = { ws: [], twilio: [] };
  const bad: Record<Path, number> = { ws: 0, twilio: 0 };
  for (const path of ['ws', 'twilio', 'ws', 'twilio'] as const) {
    const r = await runPath(rig, line, path, FIXED_CALLS);
    cores[path].push(r.cores);
    client[path].push(...r.clientVoiceToVoice);
    bad[path] += r.late + r.underruns + (r.healthy ? 0 : 1);
  }
  const addedPerCall = ((mean(cores.twilio) - mean(cores.ws)) / FIXED_CALLS) * 100;
  const [wsP50, phoneP50] = [median(client.ws), median(client.twilio)];
  return [
    {
      name: `phone: server CPU at ${FIXED_CALLS} calls, WebSocket → phone`,
      value: `${(mean(cores.ws) * 100).toFixed(1)} % → ${(mean(cores.twilio) * 100).toFixed(1)} % of a core: ${addedPerCall >= 0 ? '+' : ''}${addedPerCall.toFixed(2)} % of a core per call; late, underrun or failed ${bad.ws} → ${bad.twilio}`,
      target: '≤ 0.5 % of a core per call',
      how: `${FIXED_CALLS} real-time callers over each path in turn (ws/phone/ws/phone, mean of two each), ${SECONDS} s windows; every server thread's CPU`,
    },
    {
      name: 'phone: voice-to-voice added by the phone path',
      value: `${(phoneP50 - wsP50).toFixed(1)} ms p50 (phone ${phoneP50.toFixed(0)} ms over ${client.twilio.length} turns, WebSocket ${wsP50.toFixed(0)} ms over ${client.ws.length})`,
      target: '≤ 5 ms',
      how: `the callers' own clock, same runs: the question's last frame sent → the first agent audio received; both paths paced in 20 ms frames`,
    },
  ];
}

async function startPhoneLine(rig: LoadRig): Promise<PhoneLine> {
  const saved = await rig.server.request('PATCH', '/v1/providers', { jwt: rig.jwt, body: { twilio_account_sid: TWILIO_SID, twilio_auth_token: TWILIO_TOKEN } });
  if (saved.status !== 200) throw new Error(`carrier credentials: ${saved.status} ${saved.text}`);
  const bound = await rig.server.request('POST', '/v1/phone-numbers', { jwt: rig.jwt, body: { carrier: 'twilio', number: BUSINESS, flow_id: rig.flowId, label: 'Bench' } });
  if (bound.status !== 201) throw new Error(`phone number: ${bound.status} ${bound.text}`);
  return { webhookUrl: bound.body.webhook_url as string };
}

export async function run(): Promise<BenchRow[]> {
  const rows = [...bridgeCost(), bridgeDelay()];
  // VOXFLOW_BENCH_ONLY=bridge: the in-process rows alone (seconds, no server, no callers).
  if (process.env.VOXFLOW_BENCH_ONLY === 'bridge') return rows;
  // Twilio's REST API, faked: hang-ups the server makes (at shutdown) must not reach the real one.
  const api = await startFakeCarrierApi({ carrier: 'twilio', accountSid: TWILIO_SID, authToken: TWILIO_TOKEN });
  try {
    const rig = await startLoadRig({ tts: 'openai', config: { carriers: { twilioApiUrl: api.baseUrl } } });
    try {
      const line = await startPhoneLine(rig);
      if (process.env.VOXFLOW_BENCH_ONLY !== 'ladders') rows.push(...(await fixedCount(rig, line)));
      if (process.env.VOXFLOW_BENCH_ONLY !== 'fixed') {
        const ws = await ladder(rig, line, 'ws');
        const phone = await ladder(rig, line, 'twilio');
        rows.push(...ws.rows, ...phone.rows, {
          name: 'phone ÷ WebSocket: held per core',
          value:
            ws.held === 0
              ? `none: the WebSocket ladder held no step (${phone.held} phone calls held); on a loaded machine the first step's frames are late whatever the path`
              : `${(phone.perCore / ws.perCore).toFixed(2)} (${phone.perCore.toFixed(1)} vs ${ws.perCore.toFixed(1)} per core; ${phone.held} vs ${ws.held} held)`,
          target: '≥ 0.9',
          how: 'the two ladders above, same run, same server',
        });
      }
    } finally {
      await rig.close();
    }
  } finally {
    await api.close();
  }
  return rows;
}
