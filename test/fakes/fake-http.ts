// Plumbing shared by the fake provider servers: recording requests, the failure knobs every
// endpoint accepts, and writing a body in paced chunks that stops as soon as the client hangs up.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, the fields of a multipart form, or the raw text. */
  body: unknown;
  /**
   * 'open' while being answered; 'finished' once the whole answer went out; 'aborted' when the
   * client hung up first; 'dropped' when the fake cut the connection on purpose.
   */
  state: 'open' | 'finished' | 'aborted' | 'dropped';
}

/** Ways an endpoint can misbehave. */
export interface Fault {
  /** Answer with this HTTP status and the vendor's error body. */
  status?: number;
  /** Accept the request and send nothing (not even headers) for this long; Infinity: never. */
  hangMs?: number;
  /** Headers go out at once, the first body chunk after this long. */
  firstChunkDelayMs?: number;
  chunkDelayMs?: number;
  /** A 200 whose body is not what the client asked for. */
  garbage?: boolean;
  /** Cut the TCP connection after this many body chunks. */
  dropAfterChunks?: number;
}

export interface CountedFault extends Fault {
  /** Only the first `times` requests misbehave; all of them when absent. */
  times?: number;
}

export function faultFor(fault: CountedFault | undefined, requestNumber: number): Fault | undefined {
  if (!fault) return undefined;
  return fault.times === undefined || requestNumber <= fault.times ? fault : undefined;
}

export function record(req: IncomingMessage, res: ServerResponse, body: unknown, into: RecordedRequest[]): RecordedRequest {
  const url = new URL(req.url ?? '/', 'http://fake');
  const recorded: RecordedRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    body,
    state: 'open',
  };
  res.on('close', () => {
    if (recorded.state === 'open') recorded.state = res.writableFinished ? 'finished' : 'aborted';
  });
  into.push(recorded);
  return recorded;
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Waits `ms`, or less if the client hangs up; true when the response can still be written. */
export function pause(ms: number, res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve(!res.destroyed);
    };
    // setTimeout clamps huge delays to 1 ms, so "forever" waits for the close alone.
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    res.on('close', done);
  });
}

/** Sends `chunks` as a streamed body, honouring the pacing and drop knobs of `fault`. */
export async function writeChunks(res: ServerResponse, recorded: RecordedRequest, chunks: ReadonlyArray<string | Uint8Array>, fault: Fault = {}): Promise<void> {
  for (const [i, chunk] of chunks.entries()) {
    const wait = i === 0 ? (fault.firstChunkDelayMs ?? 0) : (fault.chunkDelayMs ?? 0);
    if (!(await pause(wait, res))) return;
    if (fault.dropAfterChunks !== undefined && i >= fault.dropAfterChunks) {
      // Let the chunks already written reach the client first, so the cut lands mid-stream.
      await pause(10, res);
      recorded.state = 'dropped';
      res.socket?.destroy();
      return;
    }
    res.write(chunk);
  }
  res.end();
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export interface Listening {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<Listening> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake server bug: ${String(error)}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
