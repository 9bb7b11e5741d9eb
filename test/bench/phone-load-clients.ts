// N real-time callers in one process, over one of two paths, paced alike so that only the path
// differs: each sends one 20 ms frame every 20 ms (a spoken question, then silence while the agent
// answers, 8 s a cycle), as a carrier paces a call's media.
//   ws      the engine router's /ws, PCM16 16 kHz frames of 20 ms
//   twilio  a fake Twilio: the signed voice webhook, then the media stream its TwiML names, with
//           μ-law 8 kHz media messages, as Twilio sends them (test/fakes/carriers/)
// Prints a line once all are connected, and a JSON summary when done. Each caller also times its
// own voice-to-voice: from sending the frame that ends its question to the first agent audio that
// arrives after it (turns where the agent was still talking at the question's end are left out).
// Args: one JSON object, see Options.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { encodeMulaw } from '../../server/audio/g711.ts';
import { resample } from '../../server/audio/resampler.ts';
import { streamTargetFromMarkup } from '../fakes/carriers/media-stream-client.ts';
import { carrierMessages } from '../fakes/carriers/stream-messages.ts';
import { inboundCallParams, sendVoiceWebhook } from '../fakes/carriers/voice-webhook.ts';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';

interface Options {
  path: 'ws' | 'twilio';
  sessions: number;
  seconds: number;
  ws?: { base: string; apiKey: string; flowId: string };
  twilio?: { webhookUrl: string; authToken: string; from: string; to: string };
}

const options = JSON.parse(process.argv[2]!) as Options;
const FRAME_MS = 20;
const CYCLE_MS = 8000;
const FRAMES = CYCLE_MS / FRAME_MS;
/** Agent audio this close before the question's end means the agent was still talking: no clean turn. */
const QUIET_BEFORE_MS = 300;
/** A reply later than this is not counted as this question's. */
const REPLY_WITHIN_MS = 5000;

const question = await synthesizeSpeech('Is it something you can eat?');
const questionMs = (question.length / 16000) * 1000;
const cycle = padWithSilence(question, 200, CYCLE_MS - 200 - Math.round(questionMs));
/** The frame that holds the question's last sample. */
const questionEndFrame = Math.floor((200 + questionMs) / FRAME_MS);
// Every frame of the cycle, ready to send: PCM16 16 kHz for the WebSocket, μ-law 8 kHz for Twilio.
const wide: Buffer[] = [];
const narrow: Uint8Array[] = [];
const cycle8k = resample(cycle, 16000, 8000);
for (let f = 0; f < FRAMES; f++) {
  const pcm = cycle.slice(f * 320, (f + 1) * 320);
  wide.push(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  const frame = new Int16Array(160);
  frame.set(cycle8k.subarray(f * 160, (f + 1) * 160));
  narrow.push(encodeMulaw(frame));
}

let framesReceived = 0;
let opened = 0;
let failures = 0;
let windowFrom = Infinity;
/** The engine's voice_to_voice_ms (WebSocket only: a phone caller gets no events). */
const serverVoiceToVoice: number[] = [];
const clientVoiceToVoice: number[] = [];
const callIds: string[] = [];
const stops: Array<() => void> = [];

/** One caller's clock and turn timing, whichever path carries it. */
class Caller {
  private lastAgentAudioAt = -Infinity;
  private questionEndAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly firstFrame: number,
    private readonly sendFrame: (index: number, sequence: number) => void,
  ) {}

  start(): void {
    const started = performance.now();
    let sent = 0;
    const tick = () => {
      if (this.stopped) return;
      const now = performance.now();
      // Drift-free: every frame due by now goes out, then the next is scheduled on the grid.
      while (started + sent * FRAME_MS <= now) {
        const index = (this.firstFrame + sent) % FRAMES;
        this.sendFrame(index, sent);
        sent++;
        if (index === questionEndFrame) this.questionEnded(performance.now());
      }
      this.timer = setTimeout(tick, started + sent * FRAME_MS - performance.now());
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  agentAudio(): void {
    framesReceived++;
    const now = performance.now();
    if (this.questionEndAt !== null) {
      const waited = now - this.questionEndAt;
      if (waited <= REPLY_WITHIN_MS && this.questionEndAt >= windowFrom) clientVoiceToVoice.push(waited);
      this.questionEndAt = null;
    }
    this.lastAgentAudioAt = now;
  }

  private questionEnded(at: number): void {
    this.questionEndAt = at - this.lastAgentAudioAt < QUIET_BEFORE_MS ? null : at;
  }
}

function wsCaller(i: number): Promise<void> {
  const { base, apiKey, flowId } = options.ws!;
  return new Promise<void>((resolve) => {
    const socket = new WebSocket(`${base}/ws?mode=flow&program_id=${flowId}`, { headers: { 'x-service-key': apiKey } });
    const caller = new Caller(Math.floor((i / options.sessions) * FRAMES), (index) => {
      if (socket.readyState === socket.OPEN) socket.send(wide[index]!);
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) caller.agentAudio();
      else {
        const text = String(data);
        if (performance.now() < windowFrom || !text.includes('"metrics"')) return;
        const event = JSON.parse(text) as { type: string; voice_to_voice_ms?: number | null };
        if (event.type === 'metrics' && typeof event.voice_to_voice_ms === 'number') serverVoiceToVoice.push(event.voice_to_voice_ms);
      }
    });
    socket.on('error', () => failures++);
    socket.on('open', () => {
      opened++;
      caller.start();
      stops.push(() => {
        caller.stop();
        socket.close();
      });
      resolve();
    });
    socket.on('unexpected-response', () => {
      failures++;
      resolve();
    });
  });
}

async function twilioCaller(i: number): Promise<void> {
  const { webhookUrl, authToken, from, to } = options.twilio!;
  const messages = carrierMessages('twilio');
  const callId = `CA${randomBytes(16).toString('hex')}`;
  const streamId = `MZ${randomBytes(16).toString('hex')}`;
  let answered;
  try {
    answered = await sendVoiceWebhook({ carrier: 'twilio', authToken }, webhookUrl, inboundCallParams('twilio', { callId, from, to }));
  } catch {
    failures++;
    return;
  }
  if (answered.status !== 200 || !answered.body.includes('<Stream')) {
    failures++;
    return;
  }
  callIds.push(callId);
  const target = streamTargetFromMarkup('twilio', answered.body);
  let sequence = 0;
  await new Promise<void>((resolve) => {
    const socket = new WebSocket(target.url);
    const send = (message: object) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
    };
    const caller = new Caller(Math.floor((i / options.sessions) * FRAMES), (index, sent) => {
      send(messages.media({ sequence: ++sequence, streamId, chunk: sent + 1, timestamp: sent * FRAME_MS, payload: narrow[index]! }));
    });
    socket.on('message', (data) => {
      const text = String(data);
      if (text.startsWith('{"event":"media"')) caller.agentAudio();
      else if (text.startsWith('{"event":"mark"')) {
        // Twilio echoes a mark once the audio before it has played; the server only counts it.
        const name = (JSON.parse(text) as { mark: { name: string } }).mark.name;
        send(messages.markAck({ sequence: ++sequence, streamId, name }));
      }
    });
    socket.on('error', () => failures++);
    socket.on('open', () => {
      opened++;
      send(messages.connected()!);
      send(messages.start({ sequence: ++sequence, streamId, callId, from, to, customParameters: target.customParameters, encoding: 'mulaw' }));
      caller.start();
      stops.push(() => {
        caller.stop();
        const stop = messages.stop({ sequence: ++sequence, streamId, callId });
        if (stop) send(stop);
        socket.close(1000);
      });
      resolve();
    });
    socket.on('unexpected-response', () => {
      failures++;
      resolve();
    });
  });
}

await Promise.all(Array.from({ length: options.sessions }, (_, i) => (options.path === 'ws' ? wsCaller(i) : twilioCaller(i))));

// Every caller is connected: the bench starts its warm-up from here, not from this process's start.
process.stdout.write(`${JSON.stringify({ phase: 'connected', opened })}\n`);
windowFrom = performance.now() + 3000;
await new Promise((r) => setTimeout(r, options.seconds * 1000));
for (const stop of stops) stop();
const windowFromEpochMs = Date.now() - (performance.now() - windowFrom);
process.stdout.write(`${JSON.stringify({ opened, failures, framesReceived, serverVoiceToVoice, clientVoiceToVoice, callIds, windowFromEpochMs })}\n`);
// Let the closes and stops reach the server before this process goes.
setTimeout(() => process.exit(0), 300);
