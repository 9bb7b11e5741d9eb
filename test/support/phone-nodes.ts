// Phone calls over several nodes (docs/phone-calls.md#several-nodes): `voxflow --serve` child
// processes on one PostgreSQL database behind one public URL, and one fake carrier (Twilio). The
// test plays the load balancer: each request the carrier makes to the public URL is delivered to
// the node the test picks (`on`), while the carrier signs the public URL, as a real one does. Each
// node reaches the carrier's REST API through a TCP pass-through of its own, so the carrier sees
// (in the Host header) which node asked it to place or hang up a call. The agent speaks with
// Deepgram's voice (its fake), a paid part, so a call's minute costs something to charge once.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startFakeCarrierApi, type FakeCarrierApi } from '../fakes/carriers/rest-server.ts';
import { startFakeDeepgram } from '../fakes/deepgram-server.ts';
import type { RecordedRequest } from '../fakes/fake-http.ts';
import type { WebhookSigner } from '../fakes/carriers/voice-webhook.ts';
import { afterThisTest } from './after-this-test.ts';
import { sharedPostgresForThisFile } from './shared-postgres.ts';
import { spawnServer, type ServerProcess } from './spawn-server.ts';

/** Where the carrier and callers reach the fleet; no node listens there (the test routes). */
export const PUBLIC_URL = 'https://voice.example.com';
const TWILIO_SID = 'AC0123456789abcdef0123456789abcdef';
const TWILIO_TOKEN = 'twilio-auth-token-0001';
/** Short, so a killed node is found gone within seconds: beats every second, sweeps every 3 s. */
export const NODE_TIMEOUT_SECONDS = 6;

export interface PhoneNode {
  name: string;
  url: string;
  process: ServerProcess;
  /** True when the carrier's recorded request came from this node. */
  made(request: RecordedRequest): boolean;
  /** Stops the node as systemd would (SIGTERM), or SIGKILL past the grace. */
  stop(): Promise<void>;
}

export interface Answer {
  status: number;
  body: any;
  text: string;
}

export interface PhoneNodes {
  api: FakeCarrierApi;
  /** The fleet's database, for what only it can tell (a node's last heartbeat). */
  databaseUrl: string;
  signer: WebhookSigner;
  /** A new node joining the fleet (the same database, keys and settings), stopped after the test. */
  startNode(name: string): Promise<PhoneNode>;
  /** The load balancer's choice: a public URL (http or ws) delivered to `node`. */
  on(node: PhoneNode, publicUrl: string): string;
  /** JSON in and out against one node. */
  request(node: PhoneNode, method: string, path: string, options?: { body?: unknown; jwt?: string; apiKey?: string }): Promise<Answer>;
  close(): Promise<void>;
}

/** A TCP pass-through to `port` on loopback: one node's own way out to the carrier. */
async function startEgress(port: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(port, '127.0.0.1');
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The fleet's shared pieces for a file: a database, the keys, the fake carrier. */
export function phoneNodesForThisFile(): () => Promise<PhoneNodes> {
  const cluster = sharedPostgresForThisFile();
  return async () => {
    const databaseUrl = await cluster.createDatabase('voxflow_phone_nodes', { migrated: true });
    const api = await startFakeCarrierApi({ carrier: 'twilio', accountSid: TWILIO_SID, authToken: TWILIO_TOKEN });
    const deepgram = await startFakeDeepgram({ transcripts: [] });
    const env = {
      VOXFLOW_DATABASE_URL: databaseUrl,
      VOXFLOW_SECRET_KEY: randomBytes(32).toString('base64'),
      VOXFLOW_JWT_SECRET: randomBytes(48).toString('base64'),
      VOXFLOW_PUBLIC_URL: PUBLIC_URL,
      VOXFLOW_NODE_TIMEOUT_SECONDS: String(NODE_TIMEOUT_SECONDS),
      // The business's webhook receiver is on loopback; a failed delivery is retried at once.
      VOXFLOW_ALLOW_PRIVATE_WEBHOOKS: 'yes',
      VOXFLOW_WEBHOOK_RETRY_SECONDS: '0.3,0.3',
      VOXFLOW_TTS_PROVIDER: 'deepgram',
      VOXFLOW_TTS_API_KEY: 'dg-test',
      VOXFLOW_TTS_BASE_URL: deepgram.url,
    };
    const started: PhoneNode[] = [];
    const cleanups: Array<() => Promise<void>> = [];
    const nodes: PhoneNodes = {
      api,
      databaseUrl,
      signer: { carrier: 'twilio', authToken: TWILIO_TOKEN },
      async startNode(name) {
        const egress = await startEgress(Number(new URL(api.baseUrl).port));
        const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-phone-node-'));
        cleanups.push(async () => {
          await egress.close();
          await rm(dataDir, { recursive: true, force: true });
        });
        const process = await spawnServer(['--data-dir', dataDir], { ...env, VOXFLOW_TWILIO_API_URL: `http://127.0.0.1:${egress.port}` }, 60_000);
        let stopping: Promise<void> | undefined;
        const node: PhoneNode = {
          name,
          url: process.url,
          process,
          made: (request) => request.headers.host === `127.0.0.1:${egress.port}`,
          stop() {
            stopping ??= (async () => {
              if (process.child.exitCode === null && process.child.signalCode === null) {
                process.child.kill('SIGTERM');
                const timer = setTimeout(() => process.child.kill('SIGKILL'), 20_000);
                await process.exited;
                clearTimeout(timer);
              }
            })();
            return stopping;
          },
        };
        started.push(node);
        return node;
      },
      on(node, publicUrl) {
        const url = new URL(publicUrl);
        const target = new URL(node.url);
        url.protocol = url.protocol === 'wss:' || url.protocol === 'ws:' ? 'ws:' : 'http:';
        url.host = target.host;
        return url.toString();
      },
      async request(node, method, path, options = {}) {
        const headers: Record<string, string> = {};
        if (options.body !== undefined) headers['content-type'] = 'application/json';
        if (options.jwt) headers.authorization = `Bearer ${options.jwt}`;
        if (options.apiKey) headers['x-service-key'] = options.apiKey;
        const response = await fetch(node.url + path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
        const text = await response.text();
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        return { status: response.status, body, text };
      },
      async close() {
        await Promise.all(started.splice(0).map((node) => node.stop()));
        for (const cleanup of cleanups.splice(0)) await cleanup();
        await api.close();
        await deepgram.close();
      },
    };
    return nodes;
  };
}

/** A test's own node, killed or stopped after it whatever happens. */
export async function nodeForThisTest(nodes: PhoneNodes, name: string): Promise<PhoneNode> {
  const node = await nodes.startNode(name);
  afterThisTest(() => node.stop());
  return node;
}

/** How a WebSocket to `url` ends: its close code, or the HTTP status of a refused upgrade. */
export function closeCode(url: string, timeoutMs = 15_000): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const socket = new WebSocket(url);
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`${url}: not closed within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    socket.once('error', () => undefined);
    socket.once('unexpected-response', (_request, response) => {
      clearTimeout(timer);
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
  });
}
