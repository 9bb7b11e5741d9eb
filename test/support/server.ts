// Starts the real app on 127.0.0.1 with a fresh data dir, for tests over real HTTP.
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { inject } from 'vitest';
import { buildApp } from '../../server/app.ts';
import { makeConfig, type ConfigInput } from '../../server/config.ts';
import type { WebRtcOptions } from '../../server/transports/webrtc/index.ts';
import { afterThisFile } from './cleanups.ts';
import { noVoiceInput } from './no-voice-input.ts';
import { POSTGRES_TEMPLATE } from './postgres-global-setup.ts';

export const GUESSING_GAME_YAML = readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');

export interface TestServer {
  app: FastifyInstance;
  url: string;
  dataDir: string;
  /** fetch against the server with JSON in and out. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is, without JSON encoding (for malformed bodies). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  jwt?: string;
  apiKey?: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestServerOptions {
  /** Length of a billed minute (buildApp's minuteMs), so metering can be tested in seconds. */
  minuteMs?: number;
  /** WebRTC peer timeouts (connect, idle, disconnect grace), so a vanished browser is noticed in seconds. */
  webrtc?: WebRtcOptions;
  /** The built studio to serve (buildApp's studioDir); dist/renderer when unset. */
  studioDir?: string | null;
  /**
   * The real voice stack: Silero hears callers, and the embedded voice and the vendors' SDKs
   * warm up once the server listens. Off by default: most tests never send audio, and loading
   * the model costs each server a few hundred ms of CPU. Tests that speak, or that check what
   * /health and /capabilities say about hearing, turn it on (startVoiceRig does).
   */
  voice?: boolean;
  /**
   * Check every answer against its route's response schema (on unless false). The benches turn it
   * off: it parses every answer with zod, which a production server never does, and was a tenth
   * of what `GET /v1/flows` cost the server.
   */
  checkResponses?: boolean;
}

let databasesMade = 0;

/**
 * In the `postgres` test project, a database of the server's own on the run's cluster, copied
 * from the migrated template, and the shared keys a PostgreSQL node must be given; elsewhere none.
 */
async function postgresFor(overrides: ConfigInput): Promise<{ config: ConfigInput; drop(): Promise<void> } | null> {
  // Outside vitest (the benches run under tsx) there is no project to ask: the embedded store.
  const cluster = process.env.VITEST ? inject('voxflowPostgres') : undefined;
  if (!cluster || overrides.databaseUrl !== undefined) return null;
  const name = `voxflow_api_${process.pid}_${++databasesMade}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: cluster });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name} TEMPLATE ${POSTGRES_TEMPLATE}`);
  return {
    config: {
      databaseUrl: cluster.replace(/\/postgres$/, `/${name}`),
      secretKey: overrides.secretKey ?? randomBytes(32).toString('base64'),
      jwtSecret: overrides.jwtSecret ?? randomBytes(48).toString('base64'),
    },
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * A server for one test file, on a data folder (and, in the postgres project, a database) of its
 * own. Whatever happens, the file's end closes it and removes both: also when the hook that started
 * it timed out before it was handed back.
 */
export function startTestServer(overrides: ConfigInput = {}, options: TestServerOptions = {}): Promise<TestServer> {
  const starting = startServer(overrides, options);
  if (process.env.VITEST) afterThisFile(async () => (await starting.catch(() => null))?.close());
  return starting;
}

/**
 * A server that outlives the test file that started it, for a helper that shares one among the
 * files a worker runs in turn (test/e2e/studio-screens-server.ts): closing it, and removing what it
 * made, is that helper's job. Anything else wants startTestServer.
 */
export function startSharedTestServer(overrides: ConfigInput = {}, options: TestServerOptions = {}): Promise<TestServer> {
  return startServer(overrides, options);
}

async function startServer(overrides: ConfigInput, options: TestServerOptions): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? (await mkdtemp(join(tmpdir(), 'voxflow-api-')));
  const postgres = await postgresFor(overrides);
  const config = makeConfig({
    host: '127.0.0.1',
    port: 0,
    logLevel: 'silent',
    // Cheap hashes keep the suite fast; one test checks the production cost separately.
    passwordHashCost: 10,
    rateLimit: { authPerMinute: 10_000, credentialPerMinute: 100_000, ipPerMinute: 100_000 },
    ...overrides,
    ...postgres?.config,
    dataDir,
  });
  const removeOwn = async () => {
    await postgres?.drop();
    if (overrides.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
  };
  const app = await buildApp(config, {
    minuteMs: options.minuteMs,
    webrtc: options.webrtc,
    studioDir: options.studioDir,
    // Every answer of every test over this server is checked against its route's response schema.
    checkResponses: options.checkResponses ?? true,
    ...(options.voice ? {} : { voiceInput: noVoiceInput, warmUpVoice: false }),
  }).catch(async (error: unknown) => {
    await removeOwn().catch(() => undefined);
    throw error;
  });
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await removeOwn();
    })());
  let address: string;
  try {
    address = await app.listen({ host: '127.0.0.1', port: 0 });
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }

  const request = jsonRequester(address);

  return {
    app,
    url: address,
    dataDir,
    request,
    close,
  };
}

/** fetch against a server at `address` with JSON in and out, credentials as the API takes them. */
export function jsonRequester(address: string): TestServer['request'] {
  return async (method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    if (options.jwt) headers.authorization = `Bearer ${options.jwt}`;
    if (options.apiKey) headers['x-service-key'] = options.apiKey;
    const response = await fetch(address + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };
}

/**
 * Everything the server keeps at rest, to search for what must not be there in plain text: the
 * data folder's files, and on PostgreSQL every row of every table as text (read over a
 * connection of its own, so it works after the app has closed). Each item names where it is.
 */
export async function storedAtRest(server: TestServer): Promise<Array<{ where: string; bytes: Buffer }>> {
  const out: Array<{ where: string; bytes: Buffer }> = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) out.push({ where: path, bytes: await readFile(path) });
    }
  };
  await walk(server.dataDir);
  const url = server.app.services.config.databaseUrl;
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const tables = await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
      for (const { name } of tables.rows) {
        const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`);
        out.push({ where: `table ${name}`, bytes: Buffer.from(rows.rows.map((r) => r.row).join('\n')) });
      }
    } finally {
      await client.end();
    }
  }
  return out;
}

let accountCounter = 0;

/** Signs up a fresh account and creates an API key for it. */
export async function createAccount(server: TestServer, email = `user${++accountCounter}-${Date.now()}@example.com`) {
  const password = 'correct horse battery staple';
  const signup = await server.request('POST', '/auth/signup', { body: { email, password } });
  if (signup.status !== 200) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
  const jwt = signup.body.access_token as string;
  const created = await server.request('POST', '/auth/api-keys?label=tests', { jwt });
  if (created.status !== 201) throw new Error(`api key failed: ${created.status} ${created.text}`);
  return { email, password, jwt, apiKey: created.body.key as string, apiKeyId: created.body.id as string };
}

export async function createFlow(server: TestServer, apiKey: string, name = 'Guessing game', yaml = GUESSING_GAME_YAML): Promise<string> {
  const response = await server.request('POST', '/v1/flows', { apiKey, body: { name, yaml_content: yaml } });
  if (response.status !== 201) throw new Error(`flow create failed: ${response.status} ${response.text}`);
  return response.body.id as string;
}
