// Webhook delivery stays fair when one account's receivers misbehave (docs/api.md#webhooks): an
// account whose 20 endpoints accept the connection and never answer holds only its share of the
// server's delivery places, so another account's session.ended still arrives within seconds; an
// endpoint that keeps failing gets a short timeout, then is paused (its deliveries wait, listed
// with when the pause ends, and no attempt is made or counted meanwhile), and once it answers
// again everything that waited is delivered, each attempt in the list being one the receiver got.
// The receivers are real HTTP servers; sessions are real WebSocket sessions driven with
// simulate_tool (no model needed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

type Account = Awaited<ReturnType<typeof createAccount>>;

interface DeliveryView {
  id: string;
  event_type: string;
  session_id: string;
  status: string;
  attempts: number;
  endpoint_paused_until: number | null;
  attempt_log: Array<{ status_code: number | null; error: string | null; at: number }>;
}

/** A short session: started, begin_game by the simulator (a tool call and a move), ended by the client; resolves when the client saw the end. */
async function playShortSession(server: TestServer, account: Account, flowId: string): Promise<{ sessionId: string; endedAt: number }> {
  const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${account.jwt}`));
  const started = await client.waitFor('session_started', undefined, 20_000);
  await client.waitFor('flow_state');
  client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'a kite' } });
  await client.waitFor('flow_state', (e) => e.state === 'playing');
  client.send({ type: 'end' });
  await client.waitFor('session_ended');
  const endedAt = Date.now();
  await client.closed;
  return { sessionId: started.session_id as string, endedAt };
}

async function createEndpoint(server: TestServer, account: Account, url: string, events?: string[]): Promise<string> {
  const response = await server.request('POST', '/v1/webhooks', { jwt: account.jwt, body: events ? { url, events } : { url } });
  expect(response.status, response.text).toBe(201);
  return response.body.id as string;
}

async function deliveries(server: TestServer, account: Account, webhookId: string): Promise<DeliveryView[]> {
  const response = await server.request('GET', `/v1/webhooks/${webhookId}/deliveries`, { apiKey: account.apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body as DeliveryView[];
}

async function pollDeliveries(server: TestServer, account: Account, webhookId: string, until: (list: DeliveryView[]) => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(server, account, webhookId);
    if (until(list)) return list;
    if (Date.now() > deadline) throw new Error(`${what} never happened: ${JSON.stringify(list, null, 1).slice(0, 3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook delivery when one account has receivers that never answer', () => {
  let server: TestServer;
  const receivers: WebhookReceiver[] = [];
  let flowId: string;
  const TIMEOUT_MS = 3_000;

  beforeAll(async () => {
    // The server's own eight places; one per endpoint, so an endpoint's attempts come one after
    // another and its failures in a row are counted in a known order; a 3 s timeout (10 s in
    // production), a 0.5 s short one, a pause after four failures in a row for 3 s (long enough
    // for the test to see it on a loaded machine), then 6 s.
    server = await startTestServer({
      webhooks: {
        allowPrivate: true,
        retrySeconds: [0.3, 0.3, 0.3, 0.3],
        timeoutMs: TIMEOUT_MS,
        concurrency: 8,
        perEndpoint: 1,
        shortTimeoutMs: 500,
        pauseAfterFailures: 4,
        firstPauseSeconds: 3,
        maxPauseSeconds: 6,
      },
    });
    const owner = await createAccount(server);
    flowId = await createFlow(server, owner.apiKey);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  async function receiver(): Promise<WebhookReceiver> {
    const made = await startWebhookReceiver();
    receivers.push(made);
    return made;
  }

  async function accountWithFlow(): Promise<{ account: Account; flowId: string }> {
    const account = await createAccount(server);
    return { account, flowId: await createFlow(server, account.apiKey) };
  }

  it("another account's session.ended arrives within seconds while one account's 20 endpoints hang", { timeout: 90_000 }, async () => {
    const hanging = await receiver();
    hanging.answerWith(() => 'hang');
    const a = await accountWithFlow();
    for (let i = 0; i < 20; i++) await createEndpoint(server, a.account, `${hanging.url}?endpoint=${i}`);
    // Four events to each of the 20: 80 deliveries that each hold a place for the whole timeout.
    await playShortSession(server, a.account, a.flowId);
    await hanging.waitFor(() => hanging.received.length >= 2, 15_000, "account A's first deliveries");

    const healthy = await receiver();
    const b = await accountWithFlow();
    await createEndpoint(server, b.account, healthy.url, ['session.ended']);
    const { sessionId, endedAt } = await playShortSession(server, b.account, b.flowId);
    const arrived = await healthy.waitFor((r) => r.json?.type === 'session.ended' && r.json?.data?.session_id === sessionId, 30_000, "account B's session.ended");
    // Oldest first across accounts, B waited behind A's 80 hanging deliveries: about 30 s here
    // (eight places, 3 s each); now well under a second on a quiet machine, a few on a loaded one.
    expect(arrived.at - endedAt).toBeLessThan(8_000);
    // A's endpoints were tried meanwhile (their share), never all of the places at once.
    expect(hanging.received.length).toBeGreaterThan(0);
  });

  it('an endpoint that keeps failing is paused, its deliveries wait without attempts, and all are delivered once it answers', { timeout: 90_000 }, async () => {
    const flaky = await receiver();
    flaky.answerWith(() => 'hang');
    const c = await accountWithFlow();
    const webhookId = await createEndpoint(server, c.account, flaky.url);
    const { sessionId } = await playShortSession(server, c.account, c.flowId);

    // Two attempts time out at 3 s, the next two at the short 0.5 s: four failures in a row, paused.
    const paused = await pollDeliveries(server, c.account, webhookId, (list) => list.some((d) => d.status === 'pending' && d.endpoint_paused_until !== null), 30_000, 'a pause');
    const pausedUntil = paused.find((d) => d.endpoint_paused_until !== null)!.endpoint_paused_until!;
    expect(pausedUntil).toBeGreaterThan(Date.now() / 1000 - 1);
    for (const d of paused) if (d.status === 'pending') expect(d.endpoint_paused_until).toBe(pausedUntil);
    const sentBeforePause = flaky.received.length;
    expect(sentBeforePause).toBe(4);
    // What the list counts is what the receiver got: the pause made no attempt.
    expect(paused.reduce((sum, d) => sum + d.attempts, 0)).toBe(sentBeforePause);

    flaky.answerWith(() => 200);
    const done = await pollDeliveries(server, c.account, webhookId, (list) => list.length >= 4 && list.every((d) => d.status === 'delivered'), 30_000, 'every delivery delivered');
    expect(done.map((d) => d.event_type).sort()).toEqual(['session.ended', 'session.started', 'session.state_changed', 'session.tool_called']);
    for (const d of done) expect(d.session_id).toBe(sessionId);

    // Nothing was sent while paused: the probe came at least the pause after the fourth failure.
    const fourth = flaky.received[3]!;
    const probe = flaky.received[4]!;
    expect(probe.at - fourth.at).toBeGreaterThanOrEqual(500 + 3_000 - 100);
    // Every attempt listed is one the receiver got, with the same webhook-id, and no more.
    for (const d of done) {
      expect(d.attempt_log).toHaveLength(d.attempts);
      expect(flaky.received.filter((r) => r.id === d.id)).toHaveLength(d.attempts);
      expect(d.endpoint_paused_until).toBeNull();
    }
    expect(done.reduce((sum, d) => sum + d.attempts, 0)).toBe(flaky.received.length);
    // The first two waited the whole timeout; once two had timed out, the next waited only the short one.
    const errors = done.flatMap((d) => d.attempt_log).sort((x, y) => x.at - y.at).map((a) => a.error);
    expect(errors.slice(0, 4)).toEqual([`no answer within ${TIMEOUT_MS / 1000} s`, `no answer within ${TIMEOUT_MS / 1000} s`, 'no answer within 0.5 s', 'no answer within 0.5 s']);
    expect(errors.slice(4).every((e) => e === null)).toBe(true);
  });
});
