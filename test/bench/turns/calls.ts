// The calls bench turns makes (turns.bench.ts): a server with the provider fakes and a fake
// Twilio, two flows (a long greeting to talk over, a short one before the caller's turn), and a
// call over either path that sends the caller's 20 ms frames on a grid and stamps what comes back
// with the number of frames sent so far.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { stringify } from 'yaml';
import type { ConfigInput } from '../../../server/config.ts';
import { streamTargetFromMarkup } from '../../fakes/carriers/media-stream-client.ts';
import { carrierMessages } from '../../fakes/carriers/stream-messages.ts';
import { startPhoneRig, type PhoneRig } from '../../support/phone-rig.ts';
import { wsUrl } from '../../support/voice-client.ts';
import type { LoadedItem } from './corpus.ts';

/** A way of taking turns: what the flow's states say (`turn:`) and the server's flags. */
export interface TurnStrategy {
  name: string;
  /** The `turn:` key of every state of the bench's flows; none: the engine's defaults. */
  turn?: Record<string, unknown>;
  config?: ConfigInput;
  /** One line: what the strategy does. */
  about: string;
}

export type Path = 'ws' | 'phone';
export const PATH_NAMES: Record<Path, string> = { ws: '16 kHz WebSocket', phone: '8 kHz phone (Twilio media stream)' };

export const FRAME_MS = 20;

const LONG_GREETING = [
  'Thank you for calling the Riverside Bistro reservations line today.',
  'Before we begin, let me tell you about our opening hours this week.',
  'We open at eleven in the morning and close at ten at night.',
  'On Fridays and Saturdays the kitchen stays open until eleven.',
  'Our terrace is open whenever the weather allows it this season.',
  'Large parties of eight or more are asked to book two days ahead.',
  'We also offer a set menu at lunch from Tuesday to Friday.',
  'Now tell me, how many people will be joining you and when?',
].join(' ');
export const FLOWS = { long: 'LONG-GREETING', short: 'SHORT-GREETING' } as const;
const SECOND_NUMBER = '+15550100003';

function flowYaml(kind: keyof typeof FLOWS, strategy: TurnStrategy): string {
  const state: Record<string, unknown> = { agent: { prompt: `${FLOWS[kind]}: greet the caller, then help them book a table.` } };
  if (strategy.turn) state.turn = strategy.turn;
  return stringify({ id: `turns-${kind}`, version: '1.0.0', initial_state: 'talk', states: { talk: state } });
}

export interface Stack {
  rig: PhoneRig;
  flowIds: Record<keyof typeof FLOWS, string>;
  /**
   * What speech recognition will hear next: the piece's words, as a recogniser that gets every
   * word right would (nothing for noise). Asked for the words at a pause inside a sentence, it
   * gives exactly those whose sound had ended, as Deepgram does: `endsMs` is when each word ends,
   * ms into the piece's speech, its pauses left out (corpus.ts timedWords). The stack's calls take turns, so the
   * next words are the next piece's.
   */
  willHear(words: string, endsMs: number[]): void;
}

export async function startStack(strategy: TurnStrategy): Promise<Stack> {
  const transcripts: string[] = [];
  const wordEnds: number[][] = [];
  const willHear = (words: string, endsMs: number[]) => {
    transcripts.length = 0;
    wordEnds.length = 0;
    if (words) {
      transcripts.push(words);
      wordEnds.push(endsMs);
    }
  };
  const rig = await startPhoneRig('twilio', {
    tts: 'openai',
    // 150 ms a word: the greeting lasts about 12 s.
    openai: {
      msPerWord: 150,
      rules: [
        { when: { lastRole: 'none', systemIncludes: FLOWS.long }, respond: { text: LONG_GREETING } },
        { when: { lastRole: 'none' }, respond: { text: 'Hello there.' } },
        { respond: { text: 'Of course, let me check that for you.' } },
      ],
    },
    deepgram: { transcripts, wordEndsMs: wordEnds },
    config: strategy.config,
    flowYaml: flowYaml('long', strategy),
  });
  try {
    const created = await rig.server.request('POST', '/v1/flows', { apiKey: rig.account.apiKey, body: { name: 'Turns, short greeting', yaml_content: flowYaml('short', strategy) } });
    if (created.status !== 201) throw new Error(`flow: ${created.status} ${created.text}`);
    const bound = await rig.server.request('POST', '/v1/phone-numbers', { jwt: rig.account.jwt, body: { carrier: 'twilio', number: SECOND_NUMBER, flow_id: created.body.id, label: 'Short greeting' } });
    if (bound.status !== 201) throw new Error(`phone number: ${bound.status} ${bound.text}`);
    return { rig, flowIds: { long: rig.flowId, short: created.body.id }, willHear };
  } catch (error) {
    await rig.close();
    throw error;
  }
}

// ── One call ─────────────────────────────────────────────────────────────────────────────────

/** A call carrying one piece: frames out on a 20 ms grid, agent audio and stop signals in. */
export class Call {
  /** Caller frames sent so far: the clock. */
  sent = 0;
  /** Caller frame count at each agent audio message's arrival, and its length. */
  readonly agentAudio: Array<{ at: number; ms: number }> = [];
  /** Caller frame count at each stop signal (`interrupted`; the carrier's `clear`). */
  readonly stops: number[] = [];
  /** The WebSocket path's `turn_end` events, as `reason wait: words` (the per-item lines show them). */
  readonly turnEnds: string[] = [];
  private queue: Buffer[] = [];
  private timer: NodeJS.Timeout | null = null;
  private waiters: Array<() => void> = [];
  failure: string | null = null;

  constructor(
    private readonly silence: Buffer,
    private readonly sendFrame: (frame: Buffer, index: number) => void,
  ) {}

  start(): void {
    const started = performance.now();
    const tick = () => {
      while (started + this.sent * FRAME_MS <= performance.now()) {
        this.sendFrame(this.queue.shift() ?? this.silence, this.sent);
        this.sent++;
      }
      for (const wake of this.waiters.splice(0)) wake();
      this.timer = setTimeout(tick, started + this.sent * FRAME_MS - performance.now());
    };
    tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /** Plays `frames` from the next frame on; resolves with the index of its first frame. */
  play(frames: Buffer[]): number {
    const first = this.sent + this.queue.length;
    this.queue.push(...frames);
    return first;
  }

  /** Resolves once `until()` holds, checked every frame; rejects past `timeoutMs`. */
  async wait(until: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!until()) {
      if (this.failure) throw new Error(this.failure);
      if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Frames of agent audio received since frame `from`. */
  agentMsSince(from: number): number {
    return this.agentAudio.filter((a) => a.at >= from).reduce((n, a) => n + a.ms, 0);
  }
}

export function framesOf(item: LoadedItem, path: Path): Buffer[] {
  const frames: Buffer[] = [];
  if (path === 'ws') {
    for (let at = 0; at < item.pcm16k.length; at += 320) {
      const frame = new Int16Array(320);
      frame.set(item.pcm16k.subarray(at, at + 320));
      frames.push(Buffer.from(frame.buffer));
    }
  } else {
    for (let at = 0; at < item.mulaw8k.length; at += 160) {
      const frame = Buffer.alloc(160, 0xff); // μ-law silence
      frame.set(item.mulaw8k.subarray(at, at + 160));
      frames.push(frame);
    }
  }
  return frames;
}

export async function openCall(stack: Stack, path: Path, kind: keyof typeof FLOWS): Promise<{ call: Call; hangUp: () => void }> {
  const { rig } = stack;
  if (path === 'ws') {
    const socket = new WebSocket(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${stack.flowIds[kind]}`), { headers: { 'x-service-key': rig.account.apiKey } });
    const call = new Call(Buffer.alloc(640), (frame) => socket.readyState === socket.OPEN && socket.send(frame));
    socket.on('message', (data, isBinary) => {
      if (isBinary) call.agentAudio.push({ at: call.sent, ms: (data as Buffer).length / 32 });
      else {
        const event = JSON.parse(String(data)) as { type: string; message?: string; fatal?: boolean; reason?: string; wait_ms?: number; transcript?: string };
        if (event.type === 'interrupted') call.stops.push(call.sent);
        if (event.type === 'turn_end') call.turnEnds.push(`${event.reason} ${event.wait_ms} ms: "${event.transcript}"`);
        if (event.type === 'error') call.turnEnds.push(`error: ${event.message}`);
        if (event.type === 'error' && event.fatal) call.failure = `session error: ${event.message}`;
      }
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    call.start();
    return { call, hangUp: () => (call.stop(), socket.close()) };
  }
  const messages = carrierMessages('twilio');
  const callId = `CA${randomBytes(16).toString('hex')}`;
  const streamId = `MZ${randomBytes(16).toString('hex')}`;
  const answered = await rig.ring(callId, kind === 'short' ? { to: SECOND_NUMBER } : {});
  if (answered.status !== 200) throw new Error(`voice webhook: ${answered.status} ${answered.body}`);
  rig.api.addLiveCall(callId, { from: '+15550100001', to: kind === 'short' ? SECOND_NUMBER : '+15550100002' });
  const target = streamTargetFromMarkup('twilio', answered.body);
  const socket = new WebSocket(target.url);
  let sequence = 0;
  const send = (message: object | null) => message && socket.readyState === socket.OPEN && socket.send(JSON.stringify(message));
  const call = new Call(Buffer.alloc(160, 0xff), (payload, index) => send(messages.media({ sequence: ++sequence, streamId, chunk: index + 1, timestamp: index * FRAME_MS, payload })));
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { event: string; media?: { payload: string }; mark?: { name: string } };
    if (message.event === 'media') call.agentAudio.push({ at: call.sent, ms: Buffer.from(message.media!.payload, 'base64').length / 8 });
    else if (message.event === 'clear') call.stops.push(call.sent);
    else if (message.event === 'mark') send(messages.markAck({ sequence: ++sequence, streamId, name: message.mark!.name }));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  send(messages.connected());
  send(messages.start({ sequence: ++sequence, streamId, callId, from: '+15550100001', to: kind === 'short' ? SECOND_NUMBER : '+15550100002', customParameters: target.customParameters, encoding: 'mulaw' }));
  call.start();
  return {
    call,
    hangUp: () => {
      call.stop();
      send(messages.stop({ sequence: ++sequence, streamId, callId }));
      socket.close(1000);
    },
  };
}
