// One test-talk connection to the engine router over WebRTC (docs/api.md#voice-sessions), the typed
// port of the /test page's client (server/transports/webrtc/test-page.html): GET /ice-servers →
// RTCPeerConnection (+ the "events" data channel) → POST /offer?mode=flow& program_id=<flow> with
// the JWT → answer; our ICE candidates follow with PATCH /offer/<pc_id>. Server events arrive as
// JSON on the data channel; client messages go back on it. No Svelte here: the panel listens to
// typed events and folds them with talk-reducer.
import type { ClientMessage } from '../../../../server/protocol/client-messages.ts';
import type { ServerEvent } from '../../../../server/protocol/events.ts';

export interface TalkClientEvents {
  /** The connection's health once it is up: a network blip shows as reconnecting. */
  connection: 'connected' | 'reconnecting';
  event: ServerEvent;
  /** The agent's voice, for an <audio> element. */
  track: MediaStream;
  /** Once, when the client is done: `ended` after session_ended or hanging up, else `message` says what failed. */
  closed: { ended: boolean; message: string };
}

export interface TalkClientOptions {
  /** The studio's JWT: with it the session may use simulate_tool. */
  token: string;
  flowId: string;
  /**
   * Run the flow's saved draft rather than its live version (docs/flows.md#drafts; the owner's JWT
   * only).
   */
  draft?: boolean;
  /**
   * Put a phone line between the page and the agent (`phone_line=1`): the server runs both voices
   * through 8 kHz G.711 μ-law and back, so the designer hears what callers will hear.
   */
  phoneLine?: boolean;
  /** Sent to the agent; null connects receive-only (typed turns and the simulator still work). The client stops its tracks when it closes. */
  microphone: MediaStream | null;
  /** Where the server is; '' for the page's own origin. */
  baseUrl?: string;
  fetch?: typeof fetch;
  createPeer?: (configuration: RTCConfiguration) => RTCPeerConnection;
  /**
   * How long the session may take to start once the answer is in. Longer than the server waits
   * for an answered peer to connect (30 s, then it ends the peer): on a busy machine a connect
   * takes seconds (the DTLS handshake most of them) and is only slow, and a browser with no
   * network path says so itself (the connection fails) well before this.
   */
  startTimeoutMs?: number;
  /** Keep-alive pings: without a microphone nothing else reaches the server, which ends idle peers. */
  pingEveryMs?: number;
  /** How long hanging up waits for session_ended before closing anyway. */
  endWaitMs?: number;
}

/** A refusal from the server (its error code and message) or a network failure. */
export class TalkConnectError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'TalkConnectError';
  }
}

type Listeners = { [K in keyof TalkClientEvents]: Set<(payload: TalkClientEvents[K]) => void> };

export class TalkClient {
  private readonly options: Required<Omit<TalkClientOptions, 'microphone'>> & { microphone: MediaStream | null };
  private readonly listeners: Listeners = { connection: new Set(), event: new Set(), track: new Set(), closed: new Set() };
  private pc: RTCPeerConnection | null = null;
  private channel: RTCDataChannel | null = null;
  private pcId: string | null = null;
  private pending: RTCIceCandidate[] = [];
  private timers = new Set<ReturnType<typeof setTimeout>>();
  private pingTimer: ReturnType<typeof setInterval> | null = null;
  private started = false;
  private reconnecting = false;
  private flushScheduled = false;
  private done = false;

  constructor(options: TalkClientOptions) {
    this.options = {
      baseUrl: '',
      fetch: (...args) => fetch(...args),
      createPeer: (configuration) => new RTCPeerConnection(configuration),
      startTimeoutMs: 45_000,
      pingEveryMs: 15_000,
      endWaitMs: 2_000,
      ...options,
      draft: options.draft ?? false,
      phoneLine: options.phoneLine ?? false,
    };
  }

  on<K extends keyof TalkClientEvents>(type: K, listener: (payload: TalkClientEvents[K]) => void): () => void {
    this.listeners[type].add(listener);
    return () => this.listeners[type].delete(listener);
  }

  get isOpen(): boolean {
    return !this.done && this.channel?.readyState === 'open';
  }

  /**
   * Negotiates the connection; resolves once the server answered. Rejects with a
   * TalkConnectError (the server's own message) when it refuses; the client is closed then.
   */
  async connect(): Promise<void> {
    try {
      await this.negotiate();
    } catch (error) {
      const failure = error instanceof TalkConnectError ? error : new TalkConnectError('webrtc', `The connection could not be set up: ${error instanceof Error ? error.message : String(error)}`, 0);
      this.finish(false, failure.message);
      throw failure;
    }
  }

  send(message: ClientMessage): boolean {
    if (!this.isOpen) return false;
    this.channel!.send(JSON.stringify(message));
    return true;
  }

  /** Hangs up: asks the server to end (so it records the end and says what it cost), then closes. */
  end(): void {
    if (this.done) return;
    if (!this.send({ type: 'end' })) return this.finish(true, '');
    // session_ended closes us; this is for a server that never answers.
    this.later(() => this.finish(true, ''), this.options.endWaitMs);
  }

  /** Closes at once without asking the server (the panel went away); the server notices the closed channel. */
  close(): void {
    this.finish(true, '');
  }

  private async negotiate(): Promise<void> {
    const ice = await this.request<{ iceServers?: RTCIceServer[] }>('GET', '/ice-servers');
    if (this.done) return;
    const pc = this.options.createPeer({ iceServers: ice.iceServers ?? [] });
    this.pc = pc;
    const track = this.options.microphone?.getAudioTracks()[0];
    if (track) pc.addTransceiver(track, { direction: 'sendrecv', streams: [this.options.microphone!] });
    else pc.addTransceiver('audio', { direction: 'recvonly' });
    // Our own channel, opened before the offer so it is negotiated with it: the server adopts it.
    const channel = pc.createDataChannel('events');
    this.channel = channel;
    channel.onopen = () => {
      this.pingTimer = setInterval(() => this.send({ type: 'ping' }), this.options.pingEveryMs);
    };
    channel.onmessage = (message) => this.onMessage(message.data);
    channel.onclose = () => this.finish(false, 'The connection to the server closed.');
    pc.ontrack = (event) => this.emit('track', event.streams[0] ?? new MediaStream([event.track]));
    pc.onconnectionstatechange = () => this.onConnectionState(pc.connectionState);
    // Half-trickle: the offer leaves at once; our candidates follow in small batches.
    pc.onicecandidate = (event) => {
      if (!event.candidate?.candidate) return;
      this.pending.push(event.candidate);
      this.scheduleFlush();
    };
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    if (this.done) return;
    const query = new URLSearchParams({ mode: 'flow', program_id: this.options.flowId, ...(this.options.draft ? { draft: '1' } : {}), ...(this.options.phoneLine ? { phone_line: '1' } : {}) });
    const answer = await this.request<{ pc_id: string; sdp: string }>('POST', `/offer?${query}`, { sdp: offer.sdp, type: 'offer' });
    if (this.done) return;
    this.pcId = answer.pc_id;
    await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    this.scheduleFlush();
    this.later(() => {
      if (this.started) return;
      // Connected but no session_started: the path was found, the server did not start the session.
      if (pc.connectionState === 'connected') this.finish(false, 'The session did not start: the connection came up but the server never started the session.');
      else this.finish(false, 'The session did not start: the browser found no network path to the server (check ICE servers and firewalls).');
    }, this.options.startTimeoutMs);
  }

  private onMessage(data: unknown): void {
    if (this.done || typeof data !== 'string') return;
    let event: ServerEvent;
    try {
      event = JSON.parse(data) as ServerEvent;
    } catch {
      return; // not ours (a Pipecat keep-alive, say): the protocol's messages are all JSON
    }
    if (typeof event !== 'object' || event === null || typeof event.type !== 'string') return;
    if (event.type === 'session_started') this.started = true;
    this.emit('event', event);
    if (event.type === 'session_ended') this.finish(true, '');
  }

  private onConnectionState(state: RTCPeerConnectionState): void {
    if (this.done) return;
    if (state === 'failed') this.finish(false, 'The connection failed: the network path to the server was lost.');
    else if (state === 'disconnected' && !this.reconnecting) {
      this.reconnecting = true;
      this.emit('connection', 'reconnecting');
    } else if (state === 'connected' && this.reconnecting) {
      this.reconnecting = false;
      this.emit('connection', 'connected');
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.pending.length === 0 || !this.pcId) return;
    this.flushScheduled = true;
    this.later(() => {
      this.flushScheduled = false;
      void this.flushCandidates();
    }, 30);
  }

  private async flushCandidates(): Promise<void> {
    if (this.done || !this.pcId || this.pending.length === 0) return;
    const candidates = this.pending.splice(0).map((c) => ({ candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex }));
    try {
      await this.request('PATCH', `/offer/${encodeURIComponent(this.pcId)}`, { candidates });
    } catch {
      // The answer carried the server's candidates; ours usually are not needed on a LAN or
      // loopback. A real failure shows as the connection not coming up.
    }
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.options.fetch(this.options.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new TalkConnectError('network', 'The server cannot be reached. Is it running?', 0);
    }
    const payload = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    if (!response.ok) {
      const error = payload?.error;
      throw new TalkConnectError(error?.code ?? `http_${response.status}`, error?.message ?? `The server answered ${response.status}.`, response.status);
    }
    return payload as T;
  }

  private later(run: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  private finish(ended: boolean, message: string): void {
    if (this.done) return;
    this.done = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.channel) this.channel.onclose = this.channel.onmessage = this.channel.onopen = null;
    if (this.pc) {
      this.pc.onconnectionstatechange = this.pc.onicecandidate = this.pc.ontrack = null;
      this.pc.close();
    }
    for (const track of this.options.microphone?.getTracks() ?? []) track.stop();
    this.emit('closed', { ended, message });
  }

  private emit<K extends keyof TalkClientEvents>(type: K, payload: TalkClientEvents[K]): void {
    for (const listener of this.listeners[type]) listener(payload);
  }
}
