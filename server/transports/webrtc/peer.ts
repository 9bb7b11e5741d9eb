// One browser (or Pipecat client) connected over WebRTC: werift's peer connection, Opus in and
// out, the session's JSON events on a data channel, and cleanup when the peer goes away.
//
// Rates: the engine speaks PCM16 at 16 kHz. libopus decodes straight to 16 kHz and encodes from
// 16 kHz (RTP's Opus clock stays 48 kHz, so timestamps advance 960 per 20 ms), which does the
// 48 kHz ⇄ 16 kHz conversion inside the codec with its own filters — cheaper and cleaner than
// decoding to 48 kHz and running a second resampler over the result.
import { randomBytes } from 'node:crypto';
import { channel as diagnosticsChannel } from 'node:diagnostics_channel';
import { Decoder, Encoder } from '@evan/opus';
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type RTCDataChannel } from 'werift';
import type { ServerEvent } from '../../protocol/events.ts';
import type { SessionOutput, VoiceSession } from '../../engine/session.ts';
import type { IceServer } from './ice-servers.ts';
import { JitterBuffer } from './jitter-buffer.ts';
import { RtpClock } from './rtp-clock.ts';

const SAMPLES_PER_FRAME = 320; // 20 ms at 16 kHz
/** Events kept while the data channel is not open yet; the oldest go first past this. */
const MAX_PENDING_EVENTS = 500;
const CLIENT_CHANNEL_WAIT_MS = 1_000;
/** The RTVI protocol version our bot-ready claims (Pipecat client-js 1.x speaks 2.x). */
const RTVI_VERSION = '2.1.0';

export interface PeerLogger {
  warn(object: Record<string, unknown>, message: string): void;
}

export interface PeerOptions {
  /** Keeps a pc_id across Pipecat's restart_pc (a new connection under the same id). */
  id?: string;
  iceServers: IceServer[];
  /** Ends the peer when it has not connected this long after the answer. */
  connectTimeoutMs: number;
  /** Ends the peer when neither audio nor data arrived for this long. */
  idleTimeoutMs: number;
  /** Time a `disconnected` connection gets to come back before it is ended. */
  disconnectGraceMs: number;
  log: PeerLogger;
  onClosed(peer: WebRtcPeer, reason: string): void;
  /** Steps timed so far (the route's); the peer adds its own. */
  phases?: ConnectPhases;
}

export type PeerState = 'new' | 'connected' | 'closed';

/**
 * When each step of one connection happened (performance.now() ms), published on
 * CONNECT_PHASES_CHANNEL once the peer connected and its session started: what the WebRTC bench
 * prints to show where offer → connected goes. Publishing costs nothing when nobody listens.
 */
export interface ConnectPhases {
  /** POST /offer reached the route. */
  offerAt: number;
  authenticatedAt?: number;
  /** The session was admitted (flow, capacity, credit) and its record written. */
  admittedAt?: number;
  /** werift's peer connection and the Opus codecs were made. */
  peerAt?: number;
  /** The answer was ready (werift gathered its candidates). */
  answeredAt?: number;
  iceConnectedAt?: number;
  /** DTLS done: connectionState connected. */
  connectedAt?: number;
  /** The engine's session was made and started (synchronously, on connect). */
  sessionStartedAt?: number;
}

export const CONNECT_PHASES_CHANNEL = 'voxflow:webrtc:connect-phases';
const connectPhases = diagnosticsChannel(CONNECT_PHASES_CHANNEL);

/**
 * The agent's voice encoder. Complexity 5 instead of libopus's default 10: measured here at
 * 169 vs 261 µs per 20 ms frame of flite speech, with the same average packet size (46 bytes).
 * The agent speaks about half of every call, so this is a large share of a session's CPU.
 */
function createVoiceEncoder(): Encoder {
  const encoder = new Encoder({ channels: 1, sample_rate: 16_000, application: 'voip' });
  encoder.complexity = 5;
  encoder.signal = 'voice';
  return encoder;
}

export class WebRtcPeer {
  readonly id: string;
  /** The id as logs show it: a pc_id lets anyone add candidates to the peer, so logs never hold it whole. */
  readonly logId: string;
  readonly pc: RTCPeerConnection;
  private readonly outbound = new MediaStreamTrack({ kind: 'audio' });
  private channel: RTCDataChannel | null = null;
  private readonly pendingEvents: string[] = [];
  private session: VoiceSession | null = null;
  private startSession: (() => VoiceSession) | null = null;
  private readonly decoder = new Decoder({ channels: 1, sample_rate: 16_000 });
  private readonly encoder = createVoiceEncoder();
  private readonly jitter = new JitterBuffer<Buffer>((payload) => this.decode(payload));
  private sequence = randomBytes(2).readUInt16BE();
  private readonly clock = new RtpClock(randomBytes(4).readUInt32BE());
  private readonly ssrc = randomBytes(4).readUInt32BE();
  private lastActivityAt = performance.now();
  private readonly timers: NodeJS.Timeout[] = [];
  private disconnectTimer: NodeJS.Timeout | null = null;
  private state: PeerState = 'new';
  private payloadType = 111;
  private preparedAnswer: Awaited<ReturnType<RTCPeerConnection['createAnswer']>> | null = null;

  constructor(private readonly options: PeerOptions) {
    this.id = options.id ?? `pc_${randomBytes(16).toString('base64url')}`;
    this.logId = shortPeerId(this.id);
    this.pc = new RTCPeerConnection({
      codecs: {
        audio: [
          new RTCRtpCodecParameters({
            mimeType: 'audio/opus',
            clockRate: 48_000,
            channels: 2,
            payloadType: 111,
            parameters: 'minptime=10;useinbandfec=1',
            rtcpFeedback: [{ type: 'transport-cc' }],
          }),
        ],
      },
      iceServers: options.iceServers.map((s) => ({ urls: s.urls, username: s.username, credential: s.credential })),
      iceUseIpv6: false,
      // werift skips loopback by default; a browser on the same machine reaches us there.
      iceAdditionalHostAddresses: ['127.0.0.1'],
    });
    const transceiver = this.pc.addTransceiver(this.outbound, { direction: 'sendrecv' });
    transceiver.onTrack.subscribe((track) => {
      track.onReceiveRtp.subscribe((rtp) => {
        this.lastActivityAt = performance.now();
        this.jitter.push(rtp.header.sequenceNumber, rtp.payload);
      });
    });
    this.pc.onDataChannel.subscribe((channel) => this.adoptChannel(channel));
    const phases = options.phases;
    if (phases) {
      phases.peerAt = performance.now();
      this.pc.iceConnectionStateChange.subscribe((state) => {
        if (state === 'connected') phases.iceConnectedAt ??= performance.now();
      });
    }
    this.pc.connectionStateChange.subscribe((state) => this.onConnectionState(state));
    this.timers.push(
      setTimeout(() => {
        if (this.state === 'new') this.close('connect_timeout');
      }, options.connectTimeoutMs),
    );
  }

  get connectionState(): PeerState {
    return this.state;
  }

  /** Whether a voice session ever started on this peer (it owns ending it then). */
  get hasSession(): boolean {
    return this.session !== null;
  }

  /** Answers an offer; the answer carries our candidates (werift gathers before it resolves). */
  async answer(offerSdp: string): Promise<string> {
    await this.prepareAnswer(offerSdp);
    return this.commitAnswer();
  }

  /**
   * Reads the offer and makes the answer, without setting it: nothing reaches the caller yet.
   * Setting it (commitAnswer) is what starts werift's connectivity checks and then its DTLS
   * handshake toward the caller, so a route that sends the answer later (once the session is
   * admitted) sets it only then: checks and a DTLS hello reaching a caller that has no answer yet
   * are dropped there and are only sent again after werift's retransmission wait (half a second
   * for DTLS), which made connects with five callers at once several times slower than the wait.
   */
  async prepareAnswer(offerSdp: string): Promise<void> {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offerSdp });
    this.preparedAnswer = await this.pc.createAnswer();
  }

  /** Sets the answer prepared (werift gathers its candidates and starts connecting) and returns it. */
  async commitAnswer(): Promise<string> {
    const answer = this.preparedAnswer;
    if (!answer) throw new Error('no answer was prepared');
    this.preparedAnswer = null;
    await this.pc.setLocalDescription(answer);
    const codec = this.pc.getTransceivers()[0]?.sender.codec;
    if (codec) this.payloadType = codec.payloadType;
    if (this.options.phases) this.options.phases.answeredAt ??= performance.now();
    // werift keeps the connection 'connected' when the browser closes or reloads; its DTLS
    // transport is what notices (the close alert), so that is watched too.
    for (const transport of this.pc.dtlsTransports) {
      transport.onStateChange.subscribe((state) => {
        if (state === 'closed' || state === 'failed') this.close(state === 'failed' ? 'ice_failed' : 'client_disconnected');
      });
    }
    return this.pc.localDescription!.sdp;
  }

  async addCandidate(candidate: { candidate: string; sdpMid?: string | null; sdpMLineIndex?: number | null }): Promise<void> {
    await this.pc.addIceCandidate({ candidate: candidate.candidate, sdpMid: candidate.sdpMid ?? undefined, sdpMLineIndex: candidate.sdpMLineIndex ?? undefined });
  }

  /** The session starts once media can flow, so its greeting is not spoken into the void. */
  onConnected(start: () => VoiceSession): void {
    this.startSession = start;
    if (this.state === 'connected') this.beginSession();
  }

  /** What the engine sends: events on the data channel, audio as Opus RTP. */
  readonly output: SessionOutput = {
    sendEvent: (event: ServerEvent) => this.sendEvent(event),
    sendAudio: (frame: Int16Array) => this.sendAudio(frame),
    close: (_code: number, reason: string) => this.close(reason),
  };

  close(reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    for (const timer of this.timers) clearInterval(timer);
    if (this.disconnectTimer) clearTimeout(this.disconnectTimer);
    void this.session?.end(reason === 'session_ended' ? 'client_ended' : reason);
    // Let the session's last events (session_ended) leave before the channel goes.
    setTimeout(() => {
      this.pc.close().catch((error: unknown) => this.options.log.warn({ err: error, peer: this.logId }, 'closing a peer connection failed'));
    }, 200).unref();
    this.options.onClosed(this, reason);
  }

  private onConnectionState(state: string): void {
    if (state === 'connected') {
      if (this.disconnectTimer) clearTimeout(this.disconnectTimer);
      this.disconnectTimer = null;
      if (this.state === 'new') {
        if (this.options.phases) this.options.phases.connectedAt = performance.now();
        this.state = 'connected';
        this.lastActivityAt = performance.now();
        this.watchIdle();
        // A client that opened its own channel announces it just after connecting; only a
        // client that did not gets one from us (events wait in the queue meanwhile).
        this.timers.push(
          setTimeout(() => {
            if (!this.channel && this.state === 'connected') this.adoptChannel(this.pc.createDataChannel('events'));
          }, CLIENT_CHANNEL_WAIT_MS),
        );
        this.beginSession();
      }
    } else if (state === 'failed' || state === 'closed') {
      this.close(state === 'failed' ? 'ice_failed' : 'client_disconnected');
    } else if (state === 'disconnected' && !this.disconnectTimer) {
      // A network blip may recover (ICE consent resumes); a peer that is really gone does not.
      this.disconnectTimer = setTimeout(() => this.close('client_disconnected'), this.options.disconnectGraceMs);
    }
  }

  private beginSession(): void {
    if (this.session || !this.startSession || this.state !== 'connected') return;
    this.session = this.startSession();
    const phases = this.options.phases;
    if (phases && connectPhases.hasSubscribers) {
      phases.sessionStartedAt = performance.now();
      connectPhases.publish(phases);
    }
  }

  private watchIdle(): void {
    const every = Math.max(1_000, Math.floor(this.options.idleTimeoutMs / 4));
    this.timers.push(
      setInterval(() => {
        if (performance.now() - this.lastActivityAt > this.options.idleTimeoutMs) this.close('idle_timeout');
      }, every),
    );
  }

  private adoptChannel(channel: RTCDataChannel): void {
    // The first channel carries the events; a client may open more (Pipecat's is one of them).
    if (this.channel) return;
    this.channel = channel;
    channel.stateChanged.subscribe((state) => {
      if (state === 'open') this.flushEvents();
      // The events channel closing means the page went away.
      if (state === 'closed' && this.state === 'connected') this.close('client_disconnected');
    });
    channel.onMessage.subscribe((data) => {
      this.lastActivityAt = performance.now();
      const text = typeof data === 'string' ? data : data.toString('utf8');
      if (this.handlePipecatMessage(text)) return;
      this.session?.handleTextFrame(text);
    });
    if (channel.readyState === 'open') this.flushEvents();
  }

  /**
   * Pipecat's client speaks RTVI on the same channel: it sends "ping: <ms>" keep-alives,
   * SmallWebRTC `signalling` notices, and `client-ready`, and its connect() resolves only once
   * `bot-ready` answers (same id, data an object). Those are answered or absorbed here; our own
   * protocol's messages go to the session.
   */
  private handlePipecatMessage(text: string): boolean {
    if (text.startsWith('ping')) return true;
    if (!text.includes('"rtvi-ai"') && !text.includes('"signalling"')) return false;
    let message: { label?: unknown; type?: unknown; id?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return false;
    }
    if (message.type === 'signalling') return true;
    if (message.label !== 'rtvi-ai') return false;
    if (message.type === 'client-ready') {
      this.sendRaw(JSON.stringify({ label: 'rtvi-ai', type: 'bot-ready', id: message.id, data: { version: RTVI_VERSION, about: { library: 'voxflow' } } }));
    }
    return true;
  }

  private sendRaw(text: string): void {
    if (this.channel?.readyState === 'open') this.channel.send(text);
    else this.pendingEvents.push(text);
  }

  private sendEvent(event: ServerEvent): void {
    const text = JSON.stringify(event);
    if (this.channel?.readyState === 'open') {
      this.channel.send(text);
      return;
    }
    this.pendingEvents.push(text);
    if (this.pendingEvents.length > MAX_PENDING_EVENTS) this.pendingEvents.shift();
  }

  private flushEvents(): void {
    while (this.pendingEvents.length > 0 && this.channel?.readyState === 'open') this.channel.send(this.pendingEvents.shift()!);
  }

  private sendAudio(frame: Int16Array): void {
    if (this.state !== 'connected' || frame.length !== SAMPLES_PER_FRAME) return;
    const { timestamp, marker } = this.clock.next(performance.now());
    this.sequence = (this.sequence + 1) & 0xffff;
    const payload = Buffer.from(this.encoder.encode(frame));
    const header = new RtpHeader({ payloadType: this.payloadType, sequenceNumber: this.sequence, timestamp, ssrc: this.ssrc, marker });
    this.outbound.writeRtp(new RtpPacket(header, payload));
  }

  private decode(payload: Buffer | null): void {
    if (!this.session) return;
    // A lost packet (null) or one libopus refuses becomes 20 ms of silence: the VAD's timeline
    // stays whole, and nothing is thrown into werift's RTP callback. (This binding has no PLC
    // entry point: decode() of an empty buffer is a BadArgument.)
    let pcm: Int16Array;
    try {
      if (!payload) throw new Error('lost');
      const bytes = this.decoder.decode(payload);
      // The decoder may reuse its buffer: the engine gets its own copy.
      pcm = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1).slice();
    } catch {
      pcm = new Int16Array(SAMPLES_PER_FRAME);
    }
    this.session.pushAudio(pcm);
  }
}

/** `pc_` and six characters: enough to follow one peer through a log, too little to use it. */
export function shortPeerId(id: string): string {
  return `${id.slice(0, 9)}…`;
}
