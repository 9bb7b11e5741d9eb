// Webhooks (docs/api.md#what-a-call-leaves-behind) as a business sees them: it registers a
// receiver, and every session's events arrive there signed, once per webhook-id, retried when the
// receiver fails, and listed with each attempt. The receiver is a real HTTP server; sessions are
// real WebSocket sessions driven with simulate_tool (no model needed).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedServerConfig } from '../../electron/server-host.ts';
import { parseCommandLine } from '../../server/config.ts';
import { sendWebhook } from '../../server/outcomes/webhooks/sender.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.ts';

type Account = Awaited<ReturnType<typeof createAccount>>;

/** A short session: started, begin_game by the simulator (a tool call and a move), ended by the client. */
async function playShortSession(server: TestServer, account: Account, flowId: string): Promise<string> {
  const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${account.jwt}`));
  const started = await client.waitFor('session_started');
  await client.waitFor('flow_state');
  client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'a kite' } });
  await client.waitFor('flow_state', (e) => e.state === 'playing');
  client.send({ type: 'end' });
  await client.waitFor('session_ended');
  await client.closed;
  return started.session_id as string;
}

async function createEndpoint(server: TestServer, account: Account, url: string, events?: string[]) {
  const response = await server.request('POST', '/v1/webhooks', { jwt: account.jwt, body: events ? { url, events } : { url } });
  expect(response.status, response.text).toBe(201);
  return response.body as { id: string; url: string; events: string[]; secret: string; created_at: number };
}

async function deliveries(server: TestServer, account: Account, webhookId: string) {
  const response = await server.request('GET', `/v1/webhooks/${webhookId}/deliveries`, { apiKey: account.apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body as Array<{ id: string; event_type: string; session_id: string; status: string; attempts: number; attempt_log: Array<{ status_code: number | null; error: string | null; at: number }> }>;
}

async function pollDeliveries(server: TestServer, account: Account, webhookId: string, until: (list: Awaited<ReturnType<typeof deliveries>>) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(server, account, webhookId);
    if (until(list)) return list;
    if (Date.now() > deadline) throw new Error(`deliveries never reached the expected state: ${JSON.stringify(list, null, 1).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('webhooks on a server that allows local receivers', () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let account: Account;
  let flowId: string;

  beforeAll(async () => {
    // Retries after 0.3 s and 0.3 s: three tries in all, so the schedule runs in a test.
    server = await startTestServer({ webhooks: { allowPrivate: true, retrySeconds: [0.3, 0.3], timeoutMs: 3_000 } });
    receiver = await startWebhookReceiver();
    account = await createAccount(server);
    flowId = await createFlow(server, account.apiKey);
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('creates an endpoint whose secret is shown once, lists it without the secret, and deletes it', async () => {
    const created = await server.request('POST', '/v1/webhooks', { jwt: account.jwt, body: { url: 'http://127.0.0.1:9/hooks', events: ['session.ended'] } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toContain('no-store');
    expect(created.body).toMatchObject({ url: 'http://127.0.0.1:9/hooks', events: ['session.ended'] });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const list = await server.request('GET', '/v1/webhooks', { apiKey: account.apiKey });
    expect(list.status).toBe(200);
    const listed = list.body.find((w: { id: string }) => w.id === created.body.id);
    expect(listed).toEqual({ id: created.body.id, url: 'http://127.0.0.1:9/hooks', events: ['session.ended'], created_at: created.body.created_at });
    expect(list.text).not.toContain(created.body.secret.slice(6, 20));

    // Another account sees none of it and cannot delete it.
    const other = await createAccount(server);
    expect((await server.request('GET', '/v1/webhooks', { jwt: other.jwt })).body).toEqual([]);
    const foreign = await server.request('DELETE', `/v1/webhooks/${created.body.id}`, { jwt: other.jwt });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('webhook_not_found');
    expect((await server.request('GET', `/v1/webhooks/${created.body.id}/deliveries`, { jwt: other.jwt })).body.error.code).toBe('webhook_not_found');

    expect((await server.request('DELETE', `/v1/webhooks/${created.body.id}`, { jwt: account.jwt })).status).toBe(204);
    expect((await server.request('DELETE', `/v1/webhooks/${created.body.id}`, { jwt: account.jwt })).status).toBe(404);
    expect((await server.request('GET', '/v1/webhooks', { jwt: account.jwt })).body.map((w: { id: string }) => w.id)).not.toContain(created.body.id);
  });

  it('refuses a bad URL or event list with every problem named, and creates nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'url'],
      [{ url: 'ftp://example.com/x' }, 'url'],
      [{ url: 'http://user:pw@example.com/x' }, 'url'],
      [{ url: 'https://example.com/x', events: [] }, 'events'],
      [{ url: 'https://example.com/x', events: ['session.exploded'] }, 'events.0'],
      [{ url: 'https://example.com/x', events: ['session.ended', 'session.ended'] }, 'events'],
      [{ url: 'https://example.com/x', secret: 'mine' }, 'body'],
    ];
    const before = (await server.request('GET', '/v1/webhooks', { jwt: account.jwt })).body.length;
    for (const [body, field] of cases) {
      const response = await server.request('POST', '/v1/webhooks', { jwt: account.jwt, body });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.details.map((d: { field: string }) => d.field), JSON.stringify(body)).toContain(field);
    }
    expect((await server.request('GET', '/v1/webhooks', { jwt: account.jwt })).body).toHaveLength(before);
  });

  it("delivers a session's four events signed, verifiable with standardwebhooks, each with the session's metadata", { timeout: 30_000 }, async () => {
    const endpoint = await createEndpoint(server, account, receiver.url);
    const sessionId = await playShortSession(server, account, flowId);
    const mine = (type: string) => (r: ReceivedWebhook) => r.json?.type === type && r.json?.data?.session_id === sessionId;
    const ended = await receiver.waitFor(mine('session.ended'), 10_000, 'session.ended');
    const started = await receiver.waitFor(mine('session.started'));
    const called = await receiver.waitFor(mine('session.tool_called'));
    const moved = await receiver.waitFor(mine('session.state_changed'));

    const verifier = new Webhook(endpoint.secret);
    for (const request of [started, called, moved, ended]) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.id).toMatch(/^msg_/);
      expect(verifier.verify(request.body, { 'webhook-id': request.id, 'webhook-timestamp': request.timestamp, 'webhook-signature': request.signature })).toEqual(request.json);
      // A body changed on the way fails the check.
      expect(() => verifier.verify(request.body.replace('session', 'sessiom'), { 'webhook-id': request.id, 'webhook-timestamp': request.timestamp, 'webhook-signature': request.signature })).toThrow();
      expect(request.json.data.metadata).toEqual({});
    }
    expect(started.json.data).toMatchObject({ session_id: sessionId, flow_id: flowId, mode: 'flow', transport: 'websocket' });
    expect(called.json.data).toMatchObject({ name: 'begin_game', arguments: { secret_thing: 'a kite' }, status: 'accepted', source: 'simulator', state: 'setup' });
    expect(moved.json.data).toMatchObject({ from_state: 'setup', to_state: 'playing', tool: 'begin_game' });
    // session.ended is what GET /v1/sessions/{id} returns.
    const detail = await server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: account.apiKey });
    expect(ended.json.data).toEqual({ session_id: sessionId, ...detail.body });
    expect(ended.json.data).toMatchObject({ status: 'ended', end_reason: 'client_ended', variables: { secret_thing: 'a kite' } });
    // The end is stamped after the moves that led to it (receivers order by timestamp, not arrival).
    expect(Date.parse(ended.json.timestamp)).toBeGreaterThanOrEqual(Date.parse(moved.json.timestamp));

    const list = await pollDeliveries(server, account, endpoint.id, (l) => l.filter((d) => d.session_id === sessionId && d.status === 'delivered').length === 4);
    for (const d of list.filter((x) => x.session_id === sessionId)) {
      expect(d.attempts).toBe(1);
      expect(d.attempt_log).toEqual([expect.objectContaining({ status_code: 200, error: null })]);
    }
    await server.request('DELETE', `/v1/webhooks/${endpoint.id}`, { jwt: account.jwt });
  });

  it('retries a refused delivery with the same webhook-id until the receiver takes it, and lists every attempt', { timeout: 30_000 }, async () => {
    const flaky = await startWebhookReceiver();
    try {
      let refusals = 0;
      flaky.answerWith(() => (refusals++ < 2 ? 503 : 200));
      const endpoint = await createEndpoint(server, account, flaky.url, ['session.ended']);
      const sessionId = await playShortSession(server, account, flowId);
      const list = await pollDeliveries(server, account, endpoint.id, (l) => l.some((d) => d.session_id === sessionId && d.status === 'delivered'));
      const delivery = list.find((d) => d.session_id === sessionId)!;
      expect(delivery.attempts).toBe(3);
      expect(delivery.attempt_log.map((a) => a.status_code)).toEqual([503, 503, 200]);
      expect(delivery.attempt_log[0]!.error).toContain('503');
      // Three requests, one id: a receiver that dedupes by webhook-id acts once.
      expect(flaky.received.map((r) => r.id)).toEqual([delivery.id, delivery.id, delivery.id]);
      expect(new Set(flaky.received.map((r) => r.body)).size).toBe(1);
      await server.request('DELETE', `/v1/webhooks/${endpoint.id}`, { jwt: account.jwt });
    } finally {
      await flaky.close();
    }
  });

  it('follows no redirect, gives up after the schedule, and sends once more on "retry now"', { timeout: 30_000 }, async () => {
    const elsewhere = await startWebhookReceiver();
    const redirecting = await startWebhookReceiver();
    try {
      redirecting.answerWith(() => ({ redirect: elsewhere.url }));
      const endpoint = await createEndpoint(server, account, redirecting.url, ['session.ended']);
      const sessionId = await playShortSession(server, account, flowId);
      const list = await pollDeliveries(server, account, endpoint.id, (l) => l.some((d) => d.session_id === sessionId && d.status === 'failed'));
      const failed = list.find((d) => d.session_id === sessionId)!;
      expect(failed.attempts).toBe(3);
      expect(failed.attempt_log.every((a) => a.status_code === 302 && /redirects are not followed/.test(a.error ?? ''))).toBe(true);
      expect(elsewhere.received).toEqual([]);

      redirecting.answerWith(() => 204);
      const retried = await server.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/${failed.id}/retry`, { jwt: account.jwt });
      expect(retried.status).toBe(202);
      const after = await pollDeliveries(server, account, endpoint.id, (l) => l.some((d) => d.id === failed.id && d.status === 'delivered'));
      expect(after.find((d) => d.id === failed.id)!.attempt_log.map((a) => a.status_code)).toEqual([302, 302, 302, 204]);

      const unknown = await server.request('POST', `/v1/webhooks/${endpoint.id}/deliveries/msg_nope/retry`, { jwt: account.jwt });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('webhook_delivery_not_found');
      await server.request('DELETE', `/v1/webhooks/${endpoint.id}`, { jwt: account.jwt });
    } finally {
      await redirecting.close();
      await elsewhere.close();
    }
  });

  it("a receiver that never answers times out, and does not hold up another endpoint's deliveries", { timeout: 30_000 }, async () => {
    const hung = await startWebhookReceiver();
    const healthy = await startWebhookReceiver();
    try {
      hung.answerWith(() => 'hang');
      const slow = await createEndpoint(server, account, hung.url, ['session.ended']);
      const fine = await createEndpoint(server, account, healthy.url, ['session.ended']);
      const sessionId = await playShortSession(server, account, flowId);
      await hung.waitFor(() => true, 10_000, 'the hung receiver’s first request');
      // The healthy endpoint gets its delivery while the other one's attempt still hangs (3 s).
      const arrived = await healthy.waitFor((r) => r.json?.data?.session_id === sessionId, 10_000, 'the healthy delivery');
      expect(arrived.at - hung.received[0]!.at).toBeLessThan(3_000);
      const list = await pollDeliveries(server, account, slow.id, (l) => l.some((d) => d.session_id === sessionId && d.attempts >= 1));
      expect(list[0]!.attempt_log[0]).toMatchObject({ status_code: null, error: 'no answer within 3 s' });
      for (const id of [slow.id, fine.id]) await server.request('DELETE', `/v1/webhooks/${id}`, { jwt: account.jwt });
    } finally {
      await hung.close();
      await healthy.close();
    }
  });
});

describe('webhooks on a hosted server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses receivers on loopback or private networks, naming the address', async () => {
    const account = await createAccount(server);
    for (const url of ['http://127.0.0.1:8080/hooks', 'http://localhost/hooks', 'http://10.1.2.3/x', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://169.254.169.254/latest']) {
      const response = await server.request('POST', '/v1/webhooks', { apiKey: account.apiKey, body: { url } });
      expect(response.status, url).toBe(422);
      expect(response.body.error.code).toBe('webhook_target_not_allowed');
      expect(response.body.error.details[0].field).toBe('url');
    }
    expect((await server.request('GET', '/v1/webhooks', { jwt: account.jwt })).body).toEqual([]);
  });

  it('says a host name that cannot be resolved cannot be resolved, not that it is refused', async () => {
    const account = await createAccount(server);
    const response = await server.request('POST', '/v1/webhooks', { apiKey: account.apiKey, body: { url: 'https://no-such-host.invalid/hooks' } });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('webhook_host_unresolvable');
    expect(response.body.error.details).toEqual([{ field: 'url', message: 'no-such-host.invalid cannot be resolved' }]);
    expect((await server.request('GET', '/v1/webhooks', { jwt: account.jwt })).body).toEqual([]);
  });

  it('checks the address again when it connects: a name that now resolves to loopback is not sent to', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const port = new URL(receiver.url).port;
      for (const url of [`http://localhost:${port}/hooks`, `http://127.0.0.1:${port}/hooks`, `http://[::ffff:127.0.0.1]:${port}/hooks`]) {
        const result = await sendWebhook(url, '{}', {}, { timeoutMs: 2_000, allowPrivate: false });
        expect(result, url).toMatchObject({ delivered: false, statusCode: null });
        expect(result.error, url).toMatch(/own network/);
      }
      expect(receiver.received).toEqual([]);
      // The same request where local receivers are allowed arrives.
      expect(await sendWebhook(`http://localhost:${port}/hooks`, '{}', {}, { timeoutMs: 2_000, allowPrivate: true })).toMatchObject({ delivered: true, statusCode: 200 });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('takes a 2xx as delivered at once, even from a receiver whose body never ends, and keeps a refusal’s first words', async () => {
    const server = createServer((req, res) => {
      req.resume();
      if (req.url === '/slow-ok') res.writeHead(200).write('still going…'); // never ended
      else res.writeHead(500).end(`${'x'.repeat(50)} database is down ${'y'.repeat(10_000)}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(await sendWebhook(`${base}/slow-ok`, '{}', {}, { timeoutMs: 3_000, allowPrivate: true })).toMatchObject({ delivered: true, statusCode: 200, error: null });
      const refused = await sendWebhook(`${base}/broken`, '{}', {}, { timeoutMs: 3_000, allowPrivate: true });
      expect(refused).toMatchObject({ delivered: false, statusCode: 500 });
      expect(refused.error).toContain('database is down');
      expect(refused.error!.length).toBeLessThan(300);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('allows them only when told: --allow-private-webhooks, or the desktop app, whose receivers are on its user’s machine', () => {
    expect(parseCommandLine(['--allow-private-webhooks'], {}).config.webhooks).toEqual({ allowPrivate: 'yes' });
    expect(embeddedServerConfig('/tmp/voxflow-desktop', {}).webhooks.allowPrivate).toBe(true);
    expect(embeddedServerConfig('/tmp/voxflow-desktop', { VOXFLOW_ALLOW_PRIVATE_WEBHOOKS: 'no' }).webhooks.allowPrivate).toBe(true);
    expect(server.app.services.config.webhooks.allowPrivate).toBe(false);
  });
});
