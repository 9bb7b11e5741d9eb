// A carrier's side of a bidirectional media stream, as each documents it. It connects to the
// stream URL our markup named, says connected and start (with the call id and the markup's custom
// parameters), sends the caller's audio as G.711 frames every 20 ms, keypad presses and stop; it
// plays what we send in real time, acknowledges each mark once the audio before it has played
// (Twilio and Telnyx also answer a clear by acknowledging every pending mark at once, Plivo with
// clearedAudio), and keeps what the caller heard.
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { decodeG711, encodeG711, type G711Law } from '../../../server/audio/g711.ts';
import { concatPcm } from '../../../server/audio/pcm.ts';
import { resample } from '../../../server/audio/resampler.ts';
import type { CarrierName } from '../../../server/transports/carriers/carrier.ts';
import { carrierMessages, type CarrierMessages } from './stream-messages.ts';

const FRAME_SAMPLES = 160; // 20 ms at 8 kHz
const FRAME_MS = 20;

export interface StreamTarget {
  url: string;
  customParameters: Record<string, string>;
}

/** Reads the stream URL and custom parameters out of the markup that answered the call. */
export function streamTargetFromMarkup(carrier: CarrierName, xml: string): StreamTarget {
  const unescape = (value: string) => value.replace(/&(lt|gt|quot|apos|amp);/g, (_, name: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[name]!);
  const attribute = (tag: string, name: string) => {
    const found = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
    return found ? unescape(found[1]!) : undefined;
  };
  const stream = /<Stream\b[^>]*>/.exec(xml)?.[0];
  if (!stream) throw new Error(`no <Stream> in the markup: ${xml}`);
  if (carrier === 'plivo') {
    const url = /<Stream\b[^>]*>([^<]*)<\/Stream>/.exec(xml)?.[1];
    const customParameters: Record<string, string> = {};
    for (const pair of (attribute(stream, 'extraHeaders') ?? '').split(',')) {
      const at = pair.indexOf('=');
      if (at > 0) customParameters[pair.slice(0, at)] = pair.slice(at + 1);
    }
    return { url: unescape(url ?? ''), customParameters };
  }
  const customParameters: Record<string, string> = {};
  for (const parameter of xml.matchAll(/<Parameter\b[^>]*\/?>/g)) customParameters[attribute(parameter[0], 'name')!] = attribute(parameter[0], 'value') ?? '';
  return { url: attribute(stream, 'url')!, customParameters };
}

export interface FakeStreamOptions {
  carrier: CarrierName;
  target: StreamTarget;
  callId?: string;
  from?: string;
  to?: string;
  /** Telnyx may stream A-law (PCMA); the others μ-law. */
  encoding?: G711Law;
  /** Telnyx delivers frames out of order: swap each pair of frames at this interval (in frames). */
  swapPairsEvery?: number;
}

interface PlayedSegment {
  startAt: number;
  pcm: Int16Array;
}

export class FakeCarrierStream {
  readonly carrier: CarrierName;
  readonly streamId: string;
  readonly callId: string;
  readonly encoding: G711Law;
  /** Marks acknowledged to us, in order. */
  readonly acknowledgedMarks: string[] = [];
  /** Marks as we sent them. */
  readonly receivedMarks: string[] = [];
  clears = 0;
  /** Anything we sent that the carrier's documentation does not allow. */
  readonly protocolErrors: string[] = [];
  closed: { code: number; reason: string } | null = null;

  private readonly socket: WebSocket;
  private readonly messages: CarrierMessages;
  private sequence = 0;
  private chunk = 0;
  private sentMs = 0;
  private playedUntil = 0;
  private readonly segments: PlayedSegment[] = [];
  private readonly pendingMarks: { name: string; timer: NodeJS.Timeout }[] = [];
  private readonly closedPromise: Promise<void>;

  private constructor(socket: WebSocket, private readonly options: FakeStreamOptions) {
    this.socket = socket;
    this.carrier = options.carrier;
    this.encoding = options.encoding ?? 'mulaw';
    this.streamId = options.carrier === 'twilio' ? `MZ${randomUUID().replace(/-/g, '')}` : randomUUID();
    this.callId = options.callId ?? (options.carrier === 'twilio' ? `CA${randomUUID().replace(/-/g, '')}` : options.carrier === 'telnyx' ? `v3:${randomUUID()}` : randomUUID());
    this.messages = carrierMessages(options.carrier);
    socket.on('message', (data, isBinary) => this.onMessage(isBinary ? null : data.toString()));
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        this.closed = { code, reason: reason.toString() };
        for (const mark of this.pendingMarks.splice(0)) clearTimeout(mark.timer);
        resolve();
      }),
    );
  }

  /** Opens the socket and sends connected (where the carrier does) and start. */
  static async connect(options: FakeStreamOptions): Promise<FakeCarrierStream> {
    const socket = new WebSocket(options.target.url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`stream URL answered ${res.statusCode}`)));
    });
    const stream = new FakeCarrierStream(socket, options);
    const connected = stream.messages.connected();
    if (connected) stream.send(connected);
    stream.send(
      stream.messages.start({
        sequence: stream.nextSequence(),
        streamId: stream.streamId,
        callId: stream.callId,
        from: options.from ?? '+15550100001',
        to: options.to ?? '+15550100002',
        customParameters: options.target.customParameters,
        encoding: stream.encoding,
      }),
    );
    return stream;
  }

  /** Sends the caller's audio in 20 ms frames, paced in real time; 16 kHz audio is resampled first. */
  async sendAudio(pcm: Int16Array, sampleRate: 8000 | 16000 = 8000): Promise<void> {
    const narrow = sampleRate === 8000 ? pcm : resample(pcm, sampleRate, 8000);
    const frames: Uint8Array[] = [];
    for (let offset = 0; offset < narrow.length; offset += FRAME_SAMPLES) {
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(narrow.subarray(offset, offset + FRAME_SAMPLES));
      frames.push(encodeG711(this.encoding, frame));
    }
    const numbered = frames.map((payload) => ({ sequence: this.nextSequence(), chunk: ++this.chunk, timestamp: (this.sentMs += FRAME_MS), payload }));
    const every = this.options.swapPairsEvery;
    if (every) {
      for (let i = every - 1; i + 1 < numbered.length; i += every) [numbered[i], numbered[i + 1]] = [numbered[i + 1]!, numbered[i]!];
    }
    const started = performance.now();
    for (const [i, frame] of numbered.entries()) {
      if (this.socket.readyState !== WebSocket.OPEN) return;
      const due = started + i * FRAME_MS - performance.now();
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
      this.send(this.messages.media({ ...frame, streamId: this.streamId }));
    }
  }

  async sendSilence(ms: number): Promise<void> {
    await this.sendAudio(new Int16Array(Math.round((ms * 8000) / 1000)));
  }

  pressDigit(digit: string): void {
    this.send(this.messages.dtmf({ sequence: this.nextSequence(), streamId: this.streamId, digit }));
  }

  /** Any text, for the malformed-input cases. */
  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** The caller hangs up: stop (where the carrier sends one), then the socket closes. */
  async hangUp(): Promise<void> {
    const stop = this.messages.stop({ sequence: this.nextSequence(), streamId: this.streamId, callId: this.callId });
    if (stop) this.send(stop);
    this.socket.close(1000);
    await this.closedPromise;
  }

  /** The socket is open: what is sent now reaches the other end. */
  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  waitForClose(): Promise<void> {
    return this.closedPromise;
  }

  /** What the caller heard so far: our audio as played, minus whatever a clear cut off. */
  heardAudio(): Int16Array {
    const now = performance.now();
    return concatPcm(this.segments.map((segment) => segment.pcm.subarray(0, playedSamples(segment, now))));
  }

  /** Everything we sent as audio, played or not. */
  receivedAudio(): Int16Array {
    return concatPcm(this.segments.map((segment) => segment.pcm));
  }

  private nextSequence(): number {
    return ++this.sequence;
  }

  private send(message: object): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private onMessage(text: string | null): void {
    if (text === null) {
      this.protocolErrors.push('binary frame');
      return;
    }
    const parsed = this.messages.parseOutbound(text, this.streamId);
    if (parsed.kind === 'error') {
      this.protocolErrors.push(parsed.reason);
      return;
    }
    const now = performance.now();
    if (parsed.kind === 'media') {
      const pcm = decodeG711(this.encoding, parsed.payload);
      const startAt = Math.max(now, this.playedUntil);
      this.playedUntil = startAt + pcm.length / 8;
      this.segments.push({ startAt, pcm });
    } else if (parsed.kind === 'mark') {
      this.receivedMarks.push(parsed.name);
      this.pendingMarks.push({ name: parsed.name, timer: this.ackWhenPlayed(parsed.name, this.playedUntil) });
    } else {
      this.clears++;
      for (const segment of this.segments) segment.pcm = segment.pcm.subarray(0, playedSamples(segment, now));
      this.playedUntil = now;
      const pending = this.pendingMarks.splice(0);
      for (const mark of pending) clearTimeout(mark.timer);
      if (this.carrier === 'plivo') {
        // Plivo confirms the clear; checkpoints whose audio never played are not acknowledged.
        this.send(this.messages.cleared!({ sequence: this.nextSequence(), streamId: this.streamId }));
      } else {
        for (const mark of pending) this.sendMarkAck(mark.name);
      }
    }
  }

  /**
   * Acknowledges `name` once the clock reaches `at`. Node's timers count from the event loop's
   * cached time, which a busy loop leaves stale, so a timer can fire a little before its delay
   * has passed by performance.now(): it is armed again for what is left.
   */
  private ackWhenPlayed(name: string, at: number): NodeJS.Timeout {
    return setTimeout(() => {
      const left = at - performance.now();
      if (left <= 0) return this.acknowledge(name);
      const mark = this.pendingMarks.find((pending) => pending.name === name);
      if (mark) mark.timer = this.ackWhenPlayed(name, at);
    }, Math.max(0, Math.ceil(at - performance.now())));
  }

  private acknowledge(name: string): void {
    const at = this.pendingMarks.findIndex((mark) => mark.name === name);
    if (at >= 0) this.pendingMarks.splice(at, 1);
    this.sendMarkAck(name);
  }

  private sendMarkAck(name: string): void {
    this.acknowledgedMarks.push(name);
    this.send(this.messages.markAck({ sequence: this.nextSequence(), streamId: this.streamId, name }));
  }
}

function playedSamples(segment: PlayedSegment, now: number): number {
  return Math.max(0, Math.min(segment.pcm.length, Math.floor((now - segment.startAt) * 8)));
}
