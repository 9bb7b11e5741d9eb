// An operator's view of a call: a real Prometheus scrapes the server while a caller plays the
// guessing game by voice, and an OTLP/HTTP receiver (standing in for an OpenTelemetry collector;
// the protocol is our own exporter's) gets the call's trace. What is checked is what an operator
// reads: live sessions and the voice-to-voice histogram through Prometheus's query API, the
// trace's tree, and that no key, token or word the caller said is in any span by default.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GUESSING_GAME_RULES, RIG_START_TIMEOUT_MS, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { connectVoice, type VoiceClient } from '../support/voice-client.ts';

const METRICS_TOKEN = 'metrics-token-that-must-stay-secret-7f3a';
const COLLECTOR_KEY = 'collector-api-key-9c2e';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
}

/** The OTLP/HTTP JSON receiver: every span of every export, and the headers each came with. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; headers: Array<Record<string, unknown>>; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const headers: Array<Record<string, unknown>> = [];
  const value = (v: Record<string, unknown>): unknown => v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue ?? v.arrayValue ?? null;
  const attrs = (list: Array<{ key: string; value: Record<string, unknown> }> = []) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      headers.push({ ...req.headers });
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, attributes: attrs(s.attributes), events: (s.events ?? []).map((e: { name: string; attributes?: [] }) => ({ name: e.name, attributes: attrs(e.attributes) })) });
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, spans, headers, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A real Prometheus in a temp folder, scraping `target` every second with the metrics token. */
async function startPrometheus(target: string): Promise<{ url: string; query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-prometheus-'));
  const port = await freePort();
  await writeFile(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: voxflow\n    authorization:\n      credentials_file: ${join(dir, 'token')}\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  await writeFile(join(dir, 'token'), METRICS_TOKEN, { mode: 0o600 });
  const child: ChildProcess = spawn('/usr/bin/prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await vi.waitFor(async () => expect((await fetch(`${url}/-/ready`)).status).toBe(200), { timeout: 60_000, interval: 250 });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url,
    async query(expr) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await response.json()) as { data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
      return body.data.result;
    },
    close,
  };
}

/** The metric families /metrics names (a histogram's _bucket, _sum and _count are its family). */
function familiesIn(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
}

describe('a call seen through Prometheus and an OpenTelemetry collector', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let prometheus: Awaited<ReturnType<typeof startPrometheus>> | undefined;
  let rig: VoiceRig | undefined;
  let client: VoiceClient | undefined;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    rig = await startVoiceRig({
      rules: GUESSING_GAME_RULES,
      transcripts: ["I'm ready"],
      config: {
        observability: { metricsToken: METRICS_TOKEN, otelEndpoint: receiver.url, otelHeaders: `x-api-key=${COLLECTOR_KEY}` },
      },
    });
    prometheus = await startPrometheus(new URL(rig.server.url).host);
  }, RIG_START_TIMEOUT_MS);

  afterAll(async () => {
    client?.close();
    await prometheus?.close();
    await rig?.close();
    await receiver?.close();
  }, RIG_START_TIMEOUT_MS);

  it('refuses /metrics without its token (401) and answers it with the token', async () => {
    const server = rig!.server;
    expect((await server.request('GET', '/metrics')).status).toBe(401);
    const wrong = await server.request('GET', '/metrics', { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_credentials');
    expect(wrong.text).not.toContain(METRICS_TOKEN);
    const right = await server.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(right.status).toBe(200);
    expect(right.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(right.text).toContain('voxflow_sessions_live');
  });

  it('shows a live call and its voice-to-voice latency in Prometheus, and the call as one trace with no secret in it', { timeout: 180_000 }, async () => {
    const server = rig!.server;
    const started = await server.request('POST', '/v1/sessions', { apiKey: rig!.account.apiKey, body: { flow_id: rig!.flowId } });
    expect(started.status).toBe(200);
    client = await connectVoice(started.body.ws_url);
    await client.waitFor('transcript', (e) => e.role === 'agent' && /ready/.test(e.text));
    await client.waitFor('agent_stopped_speaking', undefined, 30_000);
    const mark = client.events.length;
    await client.speak("I'm ready");
    await client.waitFor('flow_state', (e) => e.state === 'playing', 30_000);
    await client.waitFor('agent_stopped_speaking', (e) => client!.events.indexOf(e) >= mark, 30_000);
    await vi.waitFor(() => expect(client!.ofType('metrics').filter((m) => m.stt_ms !== null)).toHaveLength(1), { timeout: 15_000 });

    // While the call is live, Prometheus has scraped it: one session on the WebSocket transport,
    // and the turns' voice-to-voice latencies, by vendor.
    await vi.waitFor(
      async () => {
        const live = await prometheus!.query('sum by (transport) (voxflow_sessions_live)');
        expect(live.map((r) => [r.metric.transport, r.value[1]])).toEqual([['websocket', '1']]);
        const turns = await prometheus!.query('sum by (stt_provider, llm_provider, tts_provider) (voxflow_turn_voice_to_voice_seconds_count)');
        expect(turns).toHaveLength(1);
        expect(turns[0]!.metric).toEqual({ stt_provider: 'deepgram', llm_provider: 'openai', tts_provider: 'flite' });
        expect(Number(turns[0]!.value[1])).toBeGreaterThanOrEqual(2);
      },
      { timeout: 30_000, interval: 500 },
    );

    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await vi.waitFor(async () => {
      const ended = await prometheus!.query('sum by (reason) (voxflow_sessions_ended_total)');
      expect(ended.map((r) => [r.metric.reason, r.value[1]])).toEqual([['client_ended', '1']]);
      expect((await prometheus!.query('sum(voxflow_sessions_live)'))[0]?.value[1]).toBe('0');
    }, { timeout: 30_000, interval: 500 });

    // The dashboard queries only what /metrics serves, and the alert rules load.
    const metricsText = (await server.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
    const families = familiesIn(metricsText);
    // Tokens by vendor and direction, never by model or account.
    for (const direction of ['input', 'output']) {
      const line = metricsText.split('\n').find((l) => l.startsWith(`voxflow_llm_tokens_total{provider="openai",direction="${direction}"}`));
      expect(Number(line?.split(' ').at(-1)), `${direction} tokens`).toBeGreaterThan(0);
    }
    const dashboard = JSON.parse(await readFile(new URL('../../resources/monitoring/grafana-dashboard.json', import.meta.url), 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const queried = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => [...t.expr.matchAll(/\bvoxflow_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''))));
    expect(queried.length).toBeGreaterThan(10);
    for (const name of queried) expect(families, `${name}, which the dashboard queries`).toContain(name);
    const rules = await readFile(new URL('../../resources/monitoring/voxflow-alerts.yml', import.meta.url), 'utf8');
    for (const m of rules.matchAll(/\bvoxflow_[a-z_]+/g)) expect(families, `${m[0]}, which an alert rule queries`).toContain(m[0].replace(/_(bucket|sum|count)$/, ''));
    const { stdout } = await promisify(execFile)('/usr/bin/promtool', ['check', 'rules', new URL('../../resources/monitoring/voxflow-alerts.yml', import.meta.url).pathname]);
    expect(stdout).toMatch(/SUCCESS: 5 rules found/);

    // The trace: sent as the session runs or at the latest when the server closes.
    const sessionId = (await client.waitFor('session_started')).session_id as string;
    await server.close();
    const root = receiver.spans.find((s) => s.name === 'call' && s.attributes['voxflow.session.id'] === sessionId);
    expect(root, 'the call span').toBeDefined();
    expect(root!.attributes).toMatchObject({ 'voxflow.account.id': expect.any(String), 'voxflow.flow.id': rig!.flowId, 'voxflow.transport': 'websocket', 'voxflow.end_reason': 'client_ended' });
    expect(root!.events.map((e) => e.name)).toContain('state_changed');
    const trace = receiver.spans.filter((s) => s.traceId === root!.traceId);
    const childrenOf = (span: ReceivedSpan) => trace.filter((s) => s.parentSpanId === span.spanId);
    const turns = childrenOf(root!).filter((s) => s.name === 'turn');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    const spoken = turns.find((t) => childrenOf(t).some((c) => c.name === 'stt'))!;
    expect(spoken, 'the spoken turn').toBeDefined();
    expect(childrenOf(spoken).map((c) => c.name).sort()).toEqual(['end_of_turn', 'llm', 'stt', 'tool begin_game', 'tts']);
    expect(childrenOf(spoken).find((c) => c.name === 'stt')!.attributes['voxflow.provider']).toBe('deepgram');
    expect(Number(childrenOf(spoken).find((c) => c.name === 'tts')!.attributes['voxflow.tts.characters'])).toBeGreaterThan(0);
    // The model's token counts, as the vendor reported them, summed over the turn's requests (a
    // tool call and the answer after it: two requests).
    const llm = childrenOf(spoken).find((c) => c.name === 'llm')!;
    expect(Number(llm.attributes['gen_ai.usage.input_tokens'])).toBeGreaterThan(0);
    expect(Number(llm.attributes['gen_ai.usage.output_tokens'])).toBeGreaterThan(0);
    // The collector's key went in the export's headers, and nowhere in the spans.
    expect(receiver.headers.some((h) => h['x-api-key'] === COLLECTOR_KEY)).toBe(true);

    // No secret and no word of the conversation in any attribute of any span, the API's included.
    const everything = JSON.stringify(receiver.spans);
    for (const secret of ['sk-test', 'dg-test', rig!.account.apiKey, METRICS_TOKEN, COLLECTOR_KEY, started.body.session_token as string]) expect(everything).not.toContain(secret);
    for (const said of ["I'm ready", 'Welcome to ten questions', 'a cat']) expect(everything).not.toContain(said);
    // The API's requests have spans of their own (@fastify/otel).
    expect(receiver.spans.some((s) => s.attributes['http.route'] === '/v1/sessions')).toBe(true);
  });
});
