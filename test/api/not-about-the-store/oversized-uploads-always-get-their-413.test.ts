// A body over a route's limit is answered 413 payload_too_large, and the client gets to read it:
// the server reads and discards the rest of the upload (up to a bound) before it lets go of the
// connection. Closing with the body unread made the client's kernel answer the bytes still
// arriving with a reset, which threw away the 413 before a busy client read it. The client here
// is a plain HTTP/1.1 one over a raw socket: it sends the whole body first and reads the answer
// only then, as many simple clients do (and as any client does when its CPU is busy).
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createFlow, startTestServer, type TestServer } from '../../support/server.ts';

let server: TestServer;
let apiKey: string;
let flowId: string;

beforeAll(async () => {
  server = await startTestServer();
  apiKey = (await createAccount(server)).apiKey;
  flowId = await createFlow(server, apiKey);
});
afterAll(async () => {
  await server.close();
});

const UPLOAD_BYTES = 3 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

interface Upload {
  /** How much is sent (3 MiB unless said). */
  bytes?: number;
  /** The Content-Length said (the bytes sent unless said). */
  declared?: number;
  method: string;
  path: string;
  contentType: string;
  /** Send Content-Length (the server can refuse at once) or chunked (it finds out part-way). */
  framing: 'content-length' | 'chunked';
}

interface Outcome {
  /** Everything read from the socket, once the upload was sent (or could not be). */
  text: string;
  /** The socket's error, if any (ECONNRESET when the server reset the connection). */
  error: string | null;
}

function write(socket: Socket, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())));
}

/** Sends the whole upload in 64 KiB chunks with pauses, without reading; then reads what came back. */
async function upload({ method, path, contentType, framing, bytes = UPLOAD_BYTES, declared = bytes }: Upload): Promise<Outcome> {
  const { hostname, port } = new URL(server.url);
  const socket = connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  // Nothing is read until the upload is sent: what arrives waits in the kernel, as with a busy client.
  socket.pause();
  const received: Buffer[] = [];
  let error: string | null = null;
  socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  try {
    const framingHeader = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`;
    await write(socket, `${method} ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-Service-Key: ${apiKey}\r\nContent-Type: ${contentType}\r\n${framingHeader}\r\n\r\n`);
    const chunk = Buffer.alloc(CHUNK_BYTES, 'a');
    for (let sent = 0; sent < bytes; sent += CHUNK_BYTES) {
      await write(socket, framing === 'chunked' ? Buffer.concat([Buffer.from(`${CHUNK_BYTES.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk);
      if ((sent / CHUNK_BYTES) % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (framing === 'chunked') await write(socket, '0\r\n\r\n');
    if (bytes < declared) await new Promise((resolve) => setTimeout(resolve, 1_000));
  } catch (e) {
    error ??= (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
  // Give a reset, if one comes, time to arrive before reading.
  await new Promise((resolve) => setTimeout(resolve, 200));
  socket.on('data', (data: Buffer) => received.push(data));
  socket.resume();
  // The answer, then this side closes; a server that keeps the connection open lets it go then.
  const answered = new Promise<void>((resolve) => {
    const check = () => {
      const text = Buffer.concat(received).toString('utf8');
      if (/\r\n\r\n[\s\S]*\}\}/.test(text)) resolve();
    };
    socket.on('data', check);
    check();
  });
  await Promise.race([answered, closed, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  socket.end();
  socket.destroy();
  await closed;
  return { text: Buffer.concat(received).toString('utf8'), error };
}

function expect413(outcome: Outcome) {
  expect({ status: outcome.text.split('\r\n')[0], error: outcome.error }).toEqual({ status: 'HTTP/1.1 413 Payload Too Large', error: null });
  const body = JSON.parse(outcome.text.slice(outcome.text.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };
  expect(body.error.code).toBe('payload_too_large');
}

describe('a 3 MiB upload to a route that takes less', () => {
  const ROUTES: Array<Omit<Upload, 'framing'> & { route: string }> = [
    { route: 'POST /v1/flows (JSON)', method: 'POST', path: '/v1/flows', contentType: 'application/json' },
    { route: 'PUT /v1/flows/{id}/json (parsed in a worker)', method: 'PUT', path: '/v1/flows/FLOW/json', contentType: 'application/json' },
    { route: "a carrier's voice webhook (a form)", method: 'POST', path: '/telephony/twilio/voice', contentType: 'application/x-www-form-urlencoded' },
  ];
  for (const framing of ['content-length', 'chunked'] as const) {
    it.each(ROUTES)(`$route, sent with ${framing}: the client reads 413 payload_too_large every time, no reset`, { timeout: 120_000 }, async (route) => {
      for (let round = 0; round < 4; round++) {
        expect413(await upload({ ...route, path: route.path.replace('FLOW', flowId), framing }));
      }
      // And the server goes on answering.
      expect((await server.request('GET', `/v1/flows/${flowId}`, { apiKey })).status).toBe(200);
    });
  }
});

describe('an upload that goes on and on', () => {
  it('is not read for ever: past a bound well beyond every limit, the server cuts the connection', { timeout: 120_000 }, async () => {
    const sent = 48 * 1024 * 1024;
    const outcome = await upload({ method: 'POST', path: '/v1/flows', contentType: 'application/json', framing: 'content-length', bytes: sent, declared: 1024 * 1024 * 1024 });
    // The client could not send it all: the server stopped taking it.
    expect(outcome.error).toMatch(/EPIPE|ECONNRESET/);
    expect((await server.request('GET', `/v1/flows/${flowId}`, { apiKey })).status).toBe(200);
  });
});
