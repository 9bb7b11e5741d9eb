// A call's audio over RTP (RFC 3550): G.711 at 8 kHz in 20 ms packets both ways, and RFC 4733
// telephone-events for keypad digits.
//
// Out: the engine's paced 16 kHz frames are resampled to 8 kHz, encoded and queued; a 20 ms
// clock sends one packet per tick, the next queued frame or, when the agent is quiet, a frame of
// silence, so the caller's jitter buffer sees one continuous stream (sequence numbers +1 and
// timestamps +160 each packet, no gaps to mistake for loss). A barge-in drops what is queued.
// Every call's clock is read by one shared timer (mediaClock below), so a hundred calls cost one
// timer wake every 5 ms, not a hundred; each call keeps its own 20 ms grid from its start. After
// a stall a call catches up with what it owes (up to a second): encoding happened when the frame
// was queued, so a tick is only sends. Packets are written and read by hand (rtp-wire.ts).
//
// In: packets are taken only from the address the offer named (any port: the sending port of a
// peer need not be the one it receives on); from anywhere else they are ignored. Audio packets
// go through a small reorder window (three packets) before they are decoded and resampled for
// the engine; a lost packet is 20 ms of silence, so the VAD's timeline stays whole. A
// telephone-event is a key once per event (its SSRC and RTP timestamp), however many packets carry it.
import { createSocket, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { decodeG711, encodeG711, G711_SILENCE, type G711Law } from '../../audio/g711.ts';
import { StreamingResampler } from '../../audio/resampler.ts';
import type { LineRecordingTap } from '../../engine/session-setup.ts';
import { JitterBuffer } from '../webrtc/jitter-buffer.ts';
import { readRtpPacket, writeRtpPacket } from './rtp-wire.ts';

export const LINE_RATE = 8000;
const ENGINE_RATE = 16000;
const FRAME_MS = 20;
/** How often the shared media clock wakes. */
const TICK_MS = 5;
const SAMPLES_PER_PACKET = (LINE_RATE * FRAME_MS) / 1000;
/** Agent frames queued past this (a second) are dropped from the front: the engine paces, so this is a stall. */
const MAX_QUEUED_FRAMES = 50;
/**
 * After a stall of the event loop (a loaded machine, a long garbage collection) the clock sends
 * the packets it owes at once, up to a second of them, so the stream stays continuous and the
 * peer's jitter buffer sorts the burst out by timestamp; past that it is a pause: the timestamps
 * jump over it and a new talkspurt is marked.
 */
const MAX_CATCH_UP = 50;
const RTP_EVENT_KEYS = '0123456789*#ABCD';

export interface RtpPortRange {
  first: number;
  last: number;
}

/** Binds the call's RTP socket on an even port of the range (or one the OS picks when the range is 0-0). */
export async function bindRtpSocket(host: string, range: RtpPortRange): Promise<Socket> {
  if (range.first === 0) return bind(host, 0);
  const span = Math.floor((range.last - range.first) / 2) + 1;
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    const port = range.first + ((start + i) % span) * 2;
    if (port > range.last) continue;
    try {
      return await bind(host, port);
    } catch {
      // Taken (another call, another program): the next one.
    }
  }
  throw new Error(`no free RTP port in ${range.first}-${range.last}`);
}

function bind(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket({ type: 'udp4' });
    const failed = (error: Error) => {
      socket.close();
      reject(error);
    };
    socket.once('error', failed);
    socket.bind(port, host, () => {
      socket.off('error', failed);
      resolve(socket);
    });
  });
}

export interface RtpCounters {
  packetsIn: number;
  packetsOut: number;
  ignoredSource: number;
  malformed: number;
  lost: number;
}

export interface MediaTarget {
  address: string;
  port: number;
  law: G711Law;
  payloadType: number;
  telephoneEvent: number | null;
  /** False while the caller holds the call: nothing is sent. */
  sending: boolean;
  /** False while the call is inactive: nothing is taken in. */
  receiving: boolean;
}

export interface RtpCallbacks {
  /** Caller audio at the engine's 16 kHz. */
  audio(pcm: Int16Array): void;
  digit(key: string): void;
  /** A datagram problem worth one log line per call. */
  problem(reason: string): void;
}

export class RtpStream {
  readonly counters: RtpCounters = { packetsIn: 0, packetsOut: 0, ignoredSource: 0, malformed: 0, lost: 0 };
  private target: MediaTarget;
  private readonly ssrc = randomBytes(4).readUInt32BE();
  private sequence = randomBytes(2).readUInt16BE();
  private timestamp = randomBytes(4).readUInt32BE();
  private marker = true;
  private readonly queue: Uint8Array[] = [];
  private readonly down = new StreamingResampler(ENGINE_RATE, LINE_RATE);
  private readonly up = new StreamingResampler(LINE_RATE, ENGINE_RATE);
  private pendingNarrow: Int16Array = new Int16Array(0);
  /** A caller's packet decoded, when nothing keeps it (the resampler copies what it is given). */
  private readonly decoded = new Int16Array(SAMPLES_PER_PACKET);
  private running = false;
  private clockStart = 0;
  private ticks = 0;
  private readonly jitter: JitterBuffer<Buffer>;
  private lastEvent: string | null = null;
  private recording: LineRecordingTap | null = null;
  private closed = false;
  private problemTold = false;
  /**
   * When the caller's audio was last heard or stood in for by silence (performance.now()); null
   * before their first audio packet. A peer may stop sending in silence (silence suppression, or
   * a caller's audio that simply ends): past a grace of a few frames, silence is fed in its place
   * at the frame rate, so the VAD hears the pause and the caller's turn can end.
   */
  private inboundUntil: number | null = null;

  constructor(
    private readonly socket: Socket,
    target: MediaTarget,
    private readonly callbacks: RtpCallbacks,
  ) {
    this.target = { ...target };
    this.jitter = new JitterBuffer<Buffer>((payload) => this.decode(payload), 3);
    socket.on('message', (data, remote) => this.receive(data, remote.address));
    socket.on('error', (error) => this.tellProblem(`RTP socket error: ${error.message}`));
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Agent frames not sent yet. */
  get queued(): number {
    return this.queue.length;
  }

  get media(): Readonly<MediaTarget> {
    return this.target;
  }

  /** Starts the 20 ms clock: a packet every tick from now on while sending. */
  start(): void {
    if (this.running || this.closed) return;
    this.running = true;
    this.clockStart = performance.now();
    this.ticks = 0;
    mediaClock.add(this);
  }

  /** A re-INVITE moved the stream: another address, codec or direction. */
  retarget(target: MediaTarget): void {
    const lawChanged = target.law !== this.target.law;
    const resumed = target.sending && !this.target.sending;
    this.target = { ...target };
    if (lawChanged) this.queue.length = 0;
    // Back from hold: a new talkspurt, and the clock starts from now rather than catching up.
    if (resumed) {
      this.marker = true;
      this.clockStart = performance.now();
      this.ticks = 0;
    }
  }

  /** One paced 20 ms frame of the agent's voice at 16 kHz. */
  agentAudio(frame: Int16Array): void {
    if (this.closed) return;
    const narrow = this.down.process(frame);
    if (narrow.length === 0) return;
    const all = new Int16Array(this.pendingNarrow.length + narrow.length);
    all.set(this.pendingNarrow);
    all.set(narrow, this.pendingNarrow.length);
    let offset = 0;
    while (all.length - offset >= SAMPLES_PER_PACKET) {
      const chunk = all.subarray(offset, offset + SAMPLES_PER_PACKET);
      offset += SAMPLES_PER_PACKET;
      const encoded = encodeG711(this.target.law, chunk);
      // What the caller hears is the encoded frame, so that is what is recorded.
      this.recording?.agent(decodeG711(this.target.law, encoded));
      this.queue.push(encoded);
      if (this.queue.length > MAX_QUEUED_FRAMES) this.queue.shift();
    }
    this.pendingNarrow = all.slice(offset);
  }

  /** A barge-in: what is queued is not said. */
  clear(): void {
    this.queue.length = 0;
    this.pendingNarrow = new Int16Array(0);
    this.down.reset();
  }

  record(tap: LineRecordingTap): void {
    this.recording = tap;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.running = false;
    mediaClock.remove(this);
    try {
      this.socket.close();
    } catch {
      // Already closed.
    }
  }

  /** One wake of the shared clock at `now` (performance.now()): the packets this call owes by then. */
  tick(now: number): void {
    this.fillInboundSilence(now);
    const due = Math.floor((now - this.clockStart) / FRAME_MS);
    let owed = due - this.ticks;
    if (owed <= 0) return;
    if (owed > MAX_CATCH_UP) {
      // A stall longer than the catch-up (the process was paused): the gap stays a gap in time,
      // marked as a new talkspurt, rather than a burst of packets.
      this.timestamp = (this.timestamp + (owed - 1) * SAMPLES_PER_PACKET) >>> 0;
      this.marker = true;
      this.ticks = due - 1;
      owed = 1;
    }
    for (let i = 0; i < owed; i++) this.sendPacket();
    this.ticks = due;
  }

  private sendPacket(): void {
    const payload = this.queue.shift() ?? silence(this.target.law);
    this.timestamp = (this.timestamp + SAMPLES_PER_PACKET) >>> 0;
    if (!this.target.sending || this.target.port === 0) {
      // On hold: the clock runs on (timestamps keep counting wall time) and nothing is sent; the
      // sequence numbers count packets sent, so they resume where they stopped.
      this.marker = true;
      return;
    }
    this.sequence = (this.sequence + 1) & 0xffff;
    const packet = writeRtpPacket(this.target.payloadType, this.marker, this.sequence, this.timestamp, this.ssrc, payload);
    this.marker = false;
    // No callback: a send that fails is the socket's 'error' event (told once, above), and a
    // callback per packet would be one more call into JavaScript per packet when the send completes.
    this.socket.send(packet, this.target.port, this.target.address);
    this.counters.packetsOut++;
  }

  private receive(data: Buffer, from: string): void {
    if (this.closed || !this.target.receiving) return;
    if (from !== this.target.address) {
      this.counters.ignoredSource++;
      return;
    }
    const packet = readRtpPacket(data);
    if (!packet) {
      this.counters.malformed++;
      this.tellProblem('a malformed RTP packet was ignored');
      return;
    }
    this.counters.packetsIn++;
    const { payloadType, sequenceNumber, timestamp, ssrc } = packet;
    if (this.target.telephoneEvent !== null && payloadType === this.target.telephoneEvent) {
      this.telephoneEvent(packet.payload, `${ssrc}:${timestamp}`);
      return;
    }
    if (payloadType !== this.target.payloadType) return; // comfort noise, another codec: not ours to play
    this.inboundUntil = performance.now();
    this.jitter.push(sequenceNumber, packet.payload);
  }

  private fillInboundSilence(now: number): void {
    if (this.inboundUntil === null) return;
    if (now - this.inboundUntil < INBOUND_SILENCE_AFTER_MS) return;
    // Frames of silence up to now, at most a second's worth at once (after a stall of the process).
    const frames = Math.min(50, Math.floor((now - this.inboundUntil) / FRAME_MS));
    for (let i = 0; i < frames; i++) {
      const narrow = this.recording ? new Int16Array(SAMPLES_PER_PACKET) : SILENT_PACKET;
      this.recording?.caller(narrow);
      const pcm = this.up.process(narrow);
      if (pcm.length > 0) this.callbacks.audio(pcm);
    }
    this.inboundUntil = now;
  }

  private decode(payload: Buffer | null): void {
    if (payload && (payload.length === 0 || payload.length > 1600)) {
      this.counters.malformed++;
      return;
    }
    if (!payload) this.counters.lost++;
    // A recording keeps what it is given: it gets arrays of its own.
    const keep = this.recording !== null;
    const narrow = payload
      ? decodeG711(this.target.law, payload, keep || payload.length !== SAMPLES_PER_PACKET ? undefined : this.decoded)
      : keep ? new Int16Array(SAMPLES_PER_PACKET) : SILENT_PACKET;
    this.recording?.caller(narrow);
    const pcm = this.up.process(narrow);
    if (pcm.length > 0) this.callbacks.audio(pcm);
  }

  private telephoneEvent(payload: Buffer, key: string): void {
    if (payload.length < 4) {
      this.counters.malformed++;
      return;
    }
    const event = payload[0]!;
    // Events follow one another: a packet of the event last seen (its start, its updates, its
    // end sent three times) is that event again; another timestamp is the next key.
    if (event >= RTP_EVENT_KEYS.length || this.lastEvent === key) return;
    this.lastEvent = key;
    this.callbacks.digit(RTP_EVENT_KEYS[event]!);
  }

  private tellProblem(reason: string): void {
    if (this.problemTold) return;
    this.problemTold = true;
    this.callbacks.problem(reason);
  }
}

/**
 * One timer for every call's media clock: each wake reads the time once and lets every call send
 * what it owes by then. It runs only while some call's clock is started. Being one timer, it can
 * wake every 5 ms (a timer per call woke every 10): a packet leaves at most about 5 ms after its
 * time on the call's grid rather than 10, which is that much less jitter for the caller and that
 * much more of a pause of the event loop before two packets are more than 60 ms apart. 5 ms is
 * also the engine's audio clock, so Node serves both from the one timer list.
 */
class MediaClock {
  private readonly streams = new Set<RtpStream>();
  private timer: NodeJS.Timeout | null = null;

  add(stream: RtpStream): void {
    this.streams.add(stream);
    this.timer ??= setInterval(() => {
      const now = performance.now();
      for (const each of this.streams) each.tick(now);
    }, TICK_MS);
  }

  remove(stream: RtpStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

const mediaClock = new MediaClock();

const silences: Record<G711Law, Uint8Array> = {
  mulaw: new Uint8Array(SAMPLES_PER_PACKET).fill(G711_SILENCE.mulaw),
  alaw: new Uint8Array(SAMPLES_PER_PACKET).fill(G711_SILENCE.alaw),
};

/** 20 ms of silence at the line's rate, only ever read. */
const SILENT_PACKET = new Int16Array(SAMPLES_PER_PACKET);

/** No audio packet from the caller for this long: their silence is fed to the engine in its place. */
const INBOUND_SILENCE_AFTER_MS = 100;

function silence(law: G711Law): Uint8Array {
  return silences[law];
}

/** Parses `20000-20999` (or `0`, any port the OS picks). */
export function parsePortRange(text: string): RtpPortRange | null {
  if (text.trim() === '0') return { first: 0, last: 0 };
  const match = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  if (!match) return null;
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (first < 1024 || last > 65535 || last < first + 1) return null;
  return { first: first % 2 === 0 ? first : first + 1, last };
}
