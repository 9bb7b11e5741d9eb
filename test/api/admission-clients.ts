// Helpers for tests of who gets a voice session: a WebSocket connect that reports a refused
// upgrade's status and error code instead of throwing, and a real WebRTC offer.
import { connect as connectTcp } from 'node:net';
import { RTCPeerConnection } from 'werift';
import WebSocket from 'ws';

export interface OpenSession {
  ok: true;
  socket: WebSocket;
  /** Text events received so far. */
  events: Array<Record<string, any>>;
  closed: Promise<{ code: number }>;
  /** Ends the session from the client's side and waits for the server to close the socket. */
  end(): Promise<void>;
}

export type ConnectOutcome = OpenSession | { ok: false; status: number; code: string | undefined; message: string; retryAfter?: string };

/** Opens a voice WebSocket; a refused upgrade resolves with its status and the API error's code and message. */
export function tryConnect(url: string, headers: Record<string, string> = {}): Promise<ConnectOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const events: OpenSession['events'] = [];
    socket.on('message', (data, isBinary) => {
      if (!isBinary) events.push(JSON.parse((data as Buffer).toString('utf8')) as Record<string, any>);
    });
    const closed = new Promise<{ code: number }>((done) => socket.once('close', (code) => done({ code })));
    socket.once('unexpected-response', (request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        request.destroy();
        let error: { code?: string; message?: string } = {};
        try {
          error = (JSON.parse(body) as { error: typeof error }).error;
        } catch {
          // Not the API's error body: the status says it all.
        }
        const retryAfter = response.headers['retry-after'];
        resolve({ ok: false, status: response.statusCode ?? 0, code: error.code, message: error.message ?? '', ...(typeof retryAfter === 'string' ? { retryAfter } : {}) });
      });
    });
    socket.once('open', () =>
      resolve({
        ok: true,
        socket,
        events,
        closed,
        async end() {
          if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ type: 'end' }));
          await closed;
        },
      }),
    );
    socket.once('error', reject);
  });
}

/** Fires all `attempts` at once and sorts what came back. */
export async function admitAtOnce(attempts: Array<() => Promise<ConnectOutcome>>): Promise<{ open: OpenSession[]; refused: Array<Exclude<ConnectOutcome, OpenSession>> }> {
  const outcomes = await Promise.all(attempts.map((attempt) => attempt()));
  return {
    open: outcomes.filter((o): o is OpenSession => o.ok),
    refused: outcomes.filter((o): o is Exclude<ConnectOutcome, OpenSession> => !o.ok),
  };
}

/**
 * A client that asks for a voice WebSocket and hangs up before it is answered, as a flaky
 * network or an impatient script does. Resolves once its connection is gone.
 */
export function hangUpDuringUpgrade(httpUrl: string, path: string, headers: Record<string, string>): Promise<void> {
  const { hostname, port } = new URL(httpUrl);
  return new Promise((resolve) => {
    const socket = connectTcp({ host: hostname, port: Number(port) }, () => {
      const lines = [
        `GET ${path} HTTP/1.1`,
        `Host: ${hostname}:${port}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        'Sec-WebSocket-Version: 13',
        `Sec-WebSocket-Key: ${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64')}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      ];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`, () => socket.destroy());
    });
    socket.on('error', () => undefined);
    socket.once('close', () => resolve());
  });
}

/** A real SDP offer with an audio section, as any WebRTC stack makes it (werift here). */
export async function makeOffer(): Promise<{ sdp: string; close(): Promise<void> }> {
  const pc = new RTCPeerConnection({ iceUseIpv6: false });
  pc.addTransceiver('audio', { direction: 'sendrecv' });
  await pc.setLocalDescription(await pc.createOffer());
  return { sdp: pc.localDescription!.sdp, close: () => pc.close() };
}
