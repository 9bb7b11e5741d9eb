import { connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { useVoiceRig } from '../support/voice-server.ts';
import { connectVoice, wsUrl, type VoiceClient } from '../support/voice-client.ts';

interface Refusal {
  status: number;
  code: string | undefined;
  /** The server hung up after answering (a refused upgrade must not hold a socket open). */
  closedByServer: boolean;
}

/** A raw WebSocket upgrade request: the HTTP status and error code of a refusal. */
function refusalOf(url: string, path: string, headers: Record<string, string> = {}): Promise<Refusal> {
  const { hostname, port } = new URL(url);
  const lines = [
    `GET ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: Upgrade',
    'Upgrade: websocket',
    'Sec-WebSocket-Version: 13',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  // A raw socket, so only the server can end the connection: an HTTP client would hang up itself.
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let received = '';
    const settle = (closedByServer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]);
      if (!status) return reject(new Error(`no HTTP answer to ${path}: ${JSON.stringify(received)}`));
      resolve({ status, code: codeOf(received.slice(received.indexOf('\r\n\r\n') + 4)), closedByServer });
    };
    const timer = setTimeout(() => settle(false), 1_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('end', () => settle(true));
    socket.on('error', reject);
  });
}

function codeOf(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

// Bad input from a client is answered, never fatal: bad frames get `error` events on a socket
// that stays open; bad credentials and bad queries are refused at the upgrade with an HTTP status.
describe('protocol errors on the voice WebSocket', () => {
  const rig = useVoiceRig({ stt: 'none', tts: 'openai', openai: { msPerWord: 30 }, rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hi.' } }] });
  const open = async () => {
    const client = await rig.connect();
    await client.waitFor('session_started');
    return client;
  };

  it('answers malformed and unknown messages with error events and keeps the socket open', async () => {
    const client = await open();
    client.send('this is not json');
    expect(await client.waitFor('error')).toMatchObject({ code: 'malformed_message', fatal: false });
    client.send({ type: 'dance' });
    expect(await client.waitFor('error', (e) => e.code !== 'malformed_message')).toMatchObject({ code: 'unknown_message', fatal: false });
    client.send({ type: 'text', text: '   ' });
    client.send([1, 2, 3]);
    client.send({ type: 'simulate_tool' });
    await vi.waitFor(() => expect(client.ofType('error').map((e) => e.code)).toEqual(['malformed_message', 'unknown_message', 'malformed_message', 'malformed_message', 'malformed_message']));
    client.send({ type: 'ping' });
    await client.waitFor('pong');
    expect(client.socket.readyState).toBe(client.socket.OPEN);
  });

  it('answers an odd-length binary frame with malformed_audio and keeps the socket open', async () => {
    const client = await open();
    client.socket.send(Buffer.alloc(3_201));
    expect(await client.waitFor('error')).toMatchObject({ code: 'malformed_audio', fatal: false });
    client.send({ type: 'ping' });
    await client.waitFor('pong');
  });

  it('closes with 1009 on a binary frame over 64 KiB, and the session ends', async () => {
    const client = await open();
    const id = client.ofType('session_started')[0]!.session_id;
    client.socket.send(Buffer.alloc(64 * 1024 + 2));
    expect((await client.closed).code).toBe(1009);
    await vi.waitFor(async () => {
      const sessions = await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey });
      expect(sessions.body.find((s: { id: string }) => s.id === id)).toMatchObject({ status: 'ended', end_reason: 'client_disconnected' });
    });
  });

  it('accepts a frame of exactly 64 KiB', async () => {
    const client = await open();
    client.socket.send(Buffer.alloc(64 * 1024));
    client.send({ type: 'ping' });
    await client.waitFor('pong');
    expect(client.socket.readyState).toBe(client.socket.OPEN);
  });

  it('refuses unknown, used and expired session tokens with 401', async () => {
    expect(await refusalOf(rig.server.url, '/v1/ws/not-a-real-token')).toMatchObject({ status: 401, code: 'session_token_invalid' });

    const used = await rig.server.request('POST', '/v1/sessions', { apiKey: rig.account.apiKey, body: { flow_id: rig.flowId } });
    rig.track(await connectVoice(used.body.ws_url));
    expect(await refusalOf(rig.server.url, `/v1/ws/${used.body.session_token}`)).toMatchObject({ status: 401, code: 'session_token_invalid' });

    const unused = await rig.server.request('POST', '/v1/sessions', { apiKey: rig.account.apiKey, body: { flow_id: rig.flowId } });
    // Eleven minutes later: a token is good for ten.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 11 * 60_000);
      expect(await refusalOf(rig.server.url, `/v1/ws/${unused.body.session_token}`)).toMatchObject({ status: 401, code: 'session_token_invalid' });
      expect(await refusalOf(rig.server.url, `/ws?session_token=${unused.body.session_token}`)).toMatchObject({ status: 401, code: 'session_token_invalid' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses /ws without credentials (401), with a bad mode or no program_id (422), and with an unknown flow (404)', async () => {
    const key = { 'x-service-key': rig.account.apiKey };
    expect(await refusalOf(rig.server.url, '/ws')).toMatchObject({ status: 401, code: 'missing_credentials' });
    expect(await refusalOf(rig.server.url, '/ws?access_token=not-a-jwt')).toMatchObject({ status: 401, code: 'invalid_credentials' });
    expect(await refusalOf(rig.server.url, '/ws?mode=flow', key)).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusalOf(rig.server.url, '/ws?mode=bogus', key)).toMatchObject({ status: 422, code: 'invalid_request' });
    expect(await refusalOf(rig.server.url, '/ws?mode=flow&program_id=no-such-flow', key)).toMatchObject({ status: 404, code: 'flow_not_found' });
    // The test client sees the same statuses.
    await expect(connectVoice(wsUrl(rig.server.url, '/ws'))).rejects.toMatchObject({ status: 401 });
    await expect(connectVoice(wsUrl(rig.server.url, '/ws?mode=flow'), key)).rejects.toMatchObject({ status: 422 });
  });

  it('hangs up after refusing an upgrade, whichever check refused it', async () => {
    // Refused by the auth hook, by the session claim, and by the query check.
    for (const [path, headers] of [
      ['/ws', {}],
      ['/ws?session_token=nope', {}],
      ['/v1/ws/nope', {}],
      ['/ws?mode=bogus', { 'x-service-key': rig.account.apiKey }],
    ] as const) {
      expect((await refusalOf(rig.server.url, path, headers)).closedByServer, path).toBe(true);
    }
  });
});
