// The test-talk client's signalling and lifecycle against a fake peer connection and a fake
// server: what it asks the engine router (and with which credential), what it does with the
// answers, and that it always lets go of the peer and the microphone. The real WebRTC path is
// covered by test/e2e/studio-test-talk.test.ts.
import { describe, expect, it, vi } from 'vitest';

// The client is browser code, typed with the DOM's WebRTC types, and the Node-side typecheck
// (tsconfig.json: no DOM library) must not pull it in: it is loaded by a computed path, and the
// little of its surface this test uses is declared here.
const CLIENT_MODULE = '../../../../renderer/src/features/talk/talk-client.ts';
type Closed = { ended: boolean; message: string };
interface Client {
  connect(): Promise<void>;
  send(message: Record<string, unknown>): boolean;
  end(): void;
  close(): void;
  on(type: 'event', listener: (event: unknown) => void): () => void;
  on(type: 'closed', listener: (closed: Closed) => void): () => void;
  on(type: 'connection', listener: (state: string) => void): () => void;
}
const { TalkClient, TalkConnectError } = (await import(/* @vite-ignore */ CLIENT_MODULE)) as {
  TalkClient: new (options: Record<string, unknown>) => Client;
  TalkConnectError: new (...args: never[]) => Error;
};
type MediaStream = { getAudioTracks(): unknown[]; getTracks(): unknown[] };

class FakeChannel {
  readyState = 'connecting';
  sent: unknown[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((message: { data: unknown }) => void) | null = null;
  onclose: (() => void) | null = null;
  send(text: string) {
    this.sent.push(JSON.parse(text));
  }
  open() {
    this.readyState = 'open';
    this.onopen?.();
  }
  receive(data: unknown) {
    this.onmessage?.({ data: typeof data === 'string' ? data : JSON.stringify(data) });
  }
}

class FakePeer {
  transceivers: Array<{ what: unknown; init: unknown }> = [];
  channel: FakeChannel | null = null;
  remote: unknown = null;
  closed = false;
  connectionState = 'new';
  onicecandidate: ((event: { candidate: unknown }) => void) | null = null;
  ontrack: ((event: unknown) => void) | null = null;
  onconnectionstatechange: (() => void) | null = null;
  constructor(readonly configuration: unknown) {}
  addTransceiver(what: unknown, init: unknown) {
    this.transceivers.push({ what, init });
  }
  createDataChannel(label: string) {
    expect(label).toBe('events');
    return (this.channel = new FakeChannel());
  }
  async createOffer() {
    return { type: 'offer', sdp: 'v=0 offer' };
  }
  async setLocalDescription() {}
  async setRemoteDescription(description: unknown) {
    this.remote = description;
  }
  close() {
    this.closed = true;
  }
  state(next: string) {
    this.connectionState = next;
    this.onconnectionstatechange?.();
  }
}

interface Request {
  method: string;
  url: string;
  authorization: string | undefined;
  body: unknown;
}

function fakeServer(answers: Record<string, { status: number; body: unknown }> = {}) {
  const requests: Request[] = [];
  const fetcher = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    requests.push({ method: init?.method ?? 'GET', url: String(url), authorization: headers.authorization, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    const path = String(url).split('?')[0]!;
    const answer =
      answers[`${init?.method} ${path}`] ??
      (path === '/ice-servers' ? { status: 200, body: { iceServers: [{ urls: 'stun:example.org' }], ttlSeconds: 3600 } } : path === '/offer' ? { status: 200, body: { pc_id: 'pc_1', sdp: 'v=0 answer', type: 'answer' } } : { status: 200, body: { status: 'success' } });
    return new Response(JSON.stringify(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } });
  };
  return { requests, fetch: fetcher as typeof fetch };
}

function fakeMicrophone() {
  const track = { kind: 'audio', stopped: false, stop() { this.stopped = true; } };
  const stream = { getAudioTracks: () => [track], getTracks: () => [track] } as unknown as MediaStream;
  return { stream, track };
}

function setUp(options: { microphone?: MediaStream | null; answers?: Record<string, { status: number; body: unknown }>; startTimeoutMs?: number; endWaitMs?: number; pingEveryMs?: number } = {}) {
  const server = fakeServer(options.answers);
  let peer: FakePeer | null = null;
  const client = new TalkClient({
    token: 'jwt-token',
    flowId: 'flow/1',
    microphone: options.microphone ?? null,
    fetch: server.fetch,
    createPeer: (configuration: unknown) => (peer = new FakePeer(configuration)),
    startTimeoutMs: options.startTimeoutMs ?? 5_000,
    endWaitMs: options.endWaitMs ?? 5_000,
    pingEveryMs: options.pingEveryMs ?? 60_000,
  });
  const seen: { events: unknown[]; closed: Closed[] } = { events: [], closed: [] };
  client.on('event', (event) => seen.events.push(event));
  client.on('closed', (closed) => seen.closed.push(closed));
  return { client, server, seen, peer: () => peer! };
}

describe('the test-talk client', () => {
  it('signals with the JWT: ICE servers, then an offer for the flow, then its candidates', async () => {
    const { client, server, peer } = setUp();
    await client.connect();
    expect(peer().configuration).toEqual({ iceServers: [{ urls: 'stun:example.org' }] });
    // No microphone: receive-only audio, so the agent is still heard; the events channel is ours.
    expect(peer().transceivers).toEqual([{ what: 'audio', init: { direction: 'recvonly' } }]);
    expect(peer().remote).toEqual({ type: 'answer', sdp: 'v=0 answer' });
    peer().onicecandidate?.({ candidate: { candidate: 'candidate:1 1 udp 1 127.0.0.1 5000 typ host', sdpMid: '0', sdpMLineIndex: 0 } });
    await vi.waitFor(() =>
      expect(server.requests.map((r) => [r.method, r.url, r.authorization])).toEqual([
        ['GET', '/ice-servers', 'Bearer jwt-token'],
        ['POST', '/offer?mode=flow&program_id=flow%2F1', 'Bearer jwt-token'],
        ['PATCH', '/offer/pc_1', 'Bearer jwt-token'],
      ]),
    );
    expect(server.requests[1]!.body).toEqual({ sdp: 'v=0 offer', type: 'offer' });
    expect(server.requests[2]!.body).toEqual({ candidates: [{ candidate: 'candidate:1 1 udp 1 127.0.0.1 5000 typ host', sdpMid: '0', sdpMLineIndex: 0 }] });
    client.close();
  });

  it('sends the microphone both ways, and stops it when the session ends', async () => {
    const mic = fakeMicrophone();
    const { client, seen, peer } = setUp({ microphone: mic.stream });
    await client.connect();
    expect(peer().transceivers).toEqual([{ what: mic.track, init: { direction: 'sendrecv', streams: [mic.stream] } }]);
    const channel = peer().channel!;
    channel.open();
    channel.receive({ type: 'session_started', session_id: 's', mode: 'flow', flow_id: 'flow/1', sample_rate: 16000 });
    channel.receive('not json');
    expect(client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'a cat' } })).toBe(true);
    expect(channel.sent).toEqual([{ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'a cat' } }]);
    channel.receive({ type: 'session_ended', reason: 'client_ended', duration_secs: 3, credits_charged_usd_cents: 0 });
    expect(seen.events.map((e) => (e as { type: string }).type)).toEqual(['session_started', 'session_ended']);
    expect(seen.closed).toEqual([{ ended: true, message: '' }]);
    expect(peer().closed).toBe(true);
    expect(mic.track.stopped).toBe(true);
    expect(client.send({ type: 'text', text: 'too late' })).toBe(false);
  });

  it("rejects with the server's own message when the offer is refused, and lets go of everything", async () => {
    const mic = fakeMicrophone();
    const { client, seen, peer } = setUp({
      microphone: mic.stream,
      answers: { 'POST /offer': { status: 404, body: { error: { code: 'not_found', message: 'No flow with the id "flow/1".' } } } },
    });
    const failure = await client.connect().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TalkConnectError);
    expect(failure).toMatchObject({ code: 'not_found', status: 404, message: 'No flow with the id "flow/1".' });
    expect(seen.closed).toEqual([{ ended: false, message: 'No flow with the id "flow/1".' }]);
    expect(peer().closed).toBe(true);
    expect(mic.track.stopped).toBe(true);
  });

  it('hangs up by asking the server to end, and closes anyway when no answer comes', async () => {
    const { client, seen, peer } = setUp({ endWaitMs: 30 });
    await client.connect();
    peer().channel!.open();
    client.end();
    expect(peer().channel!.sent).toEqual([{ type: 'end' }]);
    expect(seen.closed).toEqual([]);
    await vi.waitFor(() => expect(seen.closed).toEqual([{ ended: true, message: '' }]));
    expect(peer().closed).toBe(true);
  });

  it('keeps a session with no microphone alive with pings', async () => {
    const { client, peer } = setUp({ pingEveryMs: 20 });
    await client.connect();
    peer().channel!.open();
    await vi.waitFor(() => expect(peer().channel!.sent.length).toBeGreaterThanOrEqual(2));
    expect(new Set(peer().channel!.sent.map((m) => JSON.stringify(m)))).toEqual(new Set(['{"type":"ping"}']));
    client.close();
  });

  it('waits for a slow connect as long as the server does: a session that starts 25 s after the answer goes live', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      // The default wait, as the studio uses it.
      const server = fakeServer();
      let peer: FakePeer | null = null;
      const client = new TalkClient({ token: 'jwt-token', flowId: 'flow/1', microphone: null, fetch: server.fetch, createPeer: (configuration: unknown) => (peer = new FakePeer(configuration)) });
      const closed: Closed[] = [];
      client.on('closed', (c) => closed.push(c));
      await client.connect();
      peer!.state('connecting');
      vi.advanceTimersByTime(25_000);
      peer!.state('connected');
      peer!.channel!.open();
      peer!.channel!.receive({ type: 'session_started', session_id: 's', mode: 'flow', flow_id: 'flow/1', sample_rate: 16000 });
      vi.advanceTimersByTime(60_000);
      expect(closed).toEqual([]);
      client.close();
      expect(closed).toEqual([{ ended: true, message: '' }]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('says whether the path or the session was missing when the session never starts', async () => {
    const connected = setUp({ startTimeoutMs: 30 });
    await connected.client.connect();
    connected.peer().state('connected');
    await vi.waitFor(() => expect(connected.seen.closed).toEqual([{ ended: false, message: expect.stringContaining('the connection came up but the server never started the session') }]));
    expect(connected.peer().closed).toBe(true);
  });

  it('gives up when the session never starts, and reports a lost connection', async () => {
    const slow = setUp({ startTimeoutMs: 30 });
    await slow.client.connect();
    await vi.waitFor(() => expect(slow.seen.closed).toEqual([{ ended: false, message: expect.stringContaining('The session did not start: the browser found no network path') }]));

    const lost = setUp();
    const states: string[] = [];
    lost.client.on('connection', (state) => states.push(state));
    await lost.client.connect();
    lost.peer().channel!.receive({ type: 'session_started', session_id: 's', mode: 'flow', flow_id: 'flow/1', sample_rate: 16000 });
    lost.peer().state('connected');
    lost.peer().state('disconnected');
    lost.peer().state('connected');
    expect(states).toEqual(['reconnecting', 'connected']);
    lost.peer().state('failed');
    expect(lost.seen.closed).toEqual([{ ended: false, message: expect.stringContaining('The connection failed') }]);
  });
});
