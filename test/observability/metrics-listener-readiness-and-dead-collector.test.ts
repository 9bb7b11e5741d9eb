// What an operator sees when metrics or tracing is set up in other ways: no token (no /metrics on
// the public port), a private metrics port, /ready at the session cap, and a collector that
// never answers, which must not hold up a call.
import { createServer as createNetServer, type Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { startFakeOpenAI } from '../fakes/openai-server.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { createAccount, startTestServer } from '../support/server.ts';
import { connectVoice } from '../support/voice-client.ts';

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startSession(server: Awaited<ReturnType<typeof startTestServer>>, apiKey: string) {
  const started = await server.request('POST', '/v1/sessions', { apiKey, body: {} });
  expect(started.status).toBe(200);
  const client = await connectVoice(started.body.ws_url);
  afterThisTest(() => client.close());
  return client;
}

describe('metrics and readiness', () => {
  it('does not serve /metrics on the public port without a token (404), and serves it on the metrics port without one', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const server = await startTestServer({ observability: { metricsListen: `127.0.0.1:${port}` } });
    afterThisTest(() => server.close());
    expect((await server.request('GET', '/metrics')).status).toBe(404);
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^# HELP voxflow_sessions_live /m);
    expect((await fetch(`http://127.0.0.1:${port}/v1/flows`)).status).toBe(404);

    const plain = await startTestServer();
    afterThisTest(() => plain.close());
    expect((await plain.request('GET', '/metrics')).status).toBe(404);
  });

  it('answers /ready 200 while the node takes calls, and 503 with the reason at the session cap', { timeout: 60_000 }, async () => {
    const openai = await startFakeOpenAI({ rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello there.' } }] });
    afterThisTest(() => openai.close());
    const server = await startTestServer({
      engine: { maxSessions: 1 },
      providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url }, tts: { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url } },
    });
    afterThisTest(() => server.close());
    expect(await server.request('GET', '/ready')).toMatchObject({ status: 200, body: { ready: true, reasons: [] } });
    const account = await createAccount(server);
    const client = await startSession(server, account.apiKey);
    await client.waitFor('session_started');
    const full = await server.request('GET', '/ready');
    expect(full.status).toBe(503);
    expect(full.body).toEqual({ ready: false, reasons: ['at the session cap (1 live sessions)'] });
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await vi.waitFor(async () => expect((await server.request('GET', '/ready')).status).toBe(200), { timeout: 10_000 });
  });

  it('runs a call as usual when the collector accepts connections but never answers, and counts the spans lost', { timeout: 120_000 }, async () => {
    // A collector that takes the connection and says nothing: the worst case for an exporter.
    const sockets = new Set<Socket>();
    const blackhole = createNetServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    afterThisTest(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blackhole.close(resolve));
    });
    const openai = await startFakeOpenAI({ rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello there.' } }] });
    afterThisTest(() => openai.close());
    const metricsPort = await freePort();
    const server = await startTestServer({
      observability: { metricsListen: `127.0.0.1:${metricsPort}`, otelEndpoint: `http://127.0.0.1:${(blackhole.address() as { port: number }).port}` },
      providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url }, tts: { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url } },
    });
    afterThisTest(() => server.close());
    const account = await createAccount(server);
    const client = await startSession(server, account.apiKey);
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Hello there.');
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    // The spans could not be sent: the export times out (10 s after the batch's 5 s delay), and says so.
    await vi.waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        expect(Number(/^voxflow_otel_spans_dropped_total\{reason="export_failed"\} (\d+)/m.exec(text)?.[1] ?? 0)).toBeGreaterThan(0);
      },
      { timeout: 60_000, interval: 1000 },
    );
    // And closing does not wait on the collector for long.
    const closing = performance.now();
    await server.close();
    expect(performance.now() - closing).toBeLessThan(30_000);
  });
});
