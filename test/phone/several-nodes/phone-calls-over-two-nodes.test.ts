// Phone calls on a fleet: `voxflow --serve` nodes on one PostgreSQL behind one public URL, and one
// carrier (the Twilio fake) whose requests a load balancer spreads over them with no stickiness.
// The voice webhook is answered from the store by whichever node it reaches; the media stream's
// token is claimed by the node the stream reaches, which then runs the call and makes its REST
// calls; status callbacks land anywhere. A node killed mid-call leaves its call to the others,
// which end its session and hang the call up at the carrier.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dbfs } from '../../../server/audio/pcm.ts';
import { FakeCarrierStream, streamTargetFromMarkup } from '../../fakes/carriers/media-stream-client.ts';
import { inboundCallParams, sendVoiceWebhook } from '../../fakes/carriers/voice-webhook.ts';
import type { RecordedRequest } from '../../fakes/fake-http.ts';
import { afterThisTest } from '../../support/after-this-test.ts';
import { startWebhookReceiver } from '../../support/webhook-receiver.ts';
import { closeCode, NODE_TIMEOUT_SECONDS, nodeForThisTest, phoneNodesForThisFile, type PhoneNode, type PhoneNodes } from '../../support/phone-nodes.ts';

const BUSINESS_NUMBER = '+15550100002';
const CALLER_NUMBER = '+15550100001';
const CALLEE = '+15550107777';

const HOURS_YAML = `
id: opening-hours
version: "1.0.0"
initial_state: menu
settings:
  base_system_prompt: You answer the phone for a dental clinic.
states:
  menu:
    ui: { artifact_type: card, prompt: "Main menu" }
    on_enter:
      say: Thanks for calling the clinic. Press 1 to hear our opening hours.
    respond: false
    agent:
      prompt: Ask the caller to press 1.
    dtmf:
      keys: { "1": hours }
  hours:
    ui: { artifact_type: card, prompt: "Hours" }
    on_enter:
      say: We are open nine to five. Goodbye.
      end_session: true
    agent:
      prompt: Say goodbye.
`;

const makeNodes = phoneNodesForThisFile();
let nodes: PhoneNodes;
let a: PhoneNode;
let b: PhoneNode;
let account: { jwt: string; apiKey: string };
let flowId: string;
let webhookUrl: string;
let statusUrl: string;

beforeAll(async () => {
  nodes = await makeNodes();
  [a, b] = await Promise.all([nodes.startNode('A'), nodes.startNode('B')]);
  // The account is made on one node and set up on the other: it is all in the one database.
  const signup = await nodes.request(a, 'POST', '/auth/signup', { body: { email: `fleet-${Date.now()}@example.com`, password: 'correct horse battery staple' } });
  expect(signup.status, signup.text).toBe(200);
  const jwt = signup.body.access_token as string;
  const key = await nodes.request(b, 'POST', '/auth/api-keys?label=tests', { jwt });
  expect(key.status, key.text).toBe(201);
  account = { jwt, apiKey: key.body.key };
  const flow = await nodes.request(a, 'POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Opening hours', yaml_content: HOURS_YAML } });
  expect(flow.status, flow.text).toBe(201);
  flowId = flow.body.id;
  const credentials = await nodes.request(b, 'PATCH', '/v1/providers', { jwt, body: { twilio_account_sid: 'AC0123456789abcdef0123456789abcdef', twilio_auth_token: 'twilio-auth-token-0001' } });
  expect(credentials.status, credentials.text).toBe(200);
  const bound = await nodes.request(a, 'POST', '/v1/phone-numbers', { jwt, body: { carrier: 'twilio', number: BUSINESS_NUMBER, flow_id: flowId, label: 'Front desk' } });
  expect(bound.status, bound.text).toBe(201);
  // Both nodes hand out the public URL: the carrier is given one address for the whole fleet.
  webhookUrl = bound.body.webhook_url;
  statusUrl = bound.body.status_url;
  expect(webhookUrl).toBe('https://voice.example.com/telephony/twilio/voice');
}, 180_000);

afterAll(async () => {
  await nodes?.close();
});

const detail = async (node: PhoneNode, id: string) => (await nodes.request(node, 'GET', `/v1/sessions/${id}`, { apiKey: account.apiKey })).body;
const balance = async (node: PhoneNode) => (await nodes.request(node, 'GET', '/v1/credits/balance', { apiKey: account.apiKey })).body as { balance_usd_cents: number; effective_rate_per_minute_usd_cents: number };
const sessionOfCall = (node: PhoneNode, callId: string) =>
  vi.waitFor(
    async () => {
      const list = (await nodes.request(node, 'GET', '/v1/sessions', { apiKey: account.apiKey })).body as Array<{ id: string }>;
      const found = await Promise.all(list.map(async (s) => (await detail(node, s.id)) as { id: string; carrier_call_id: string | null }));
      const session = found.find((s) => s.carrier_call_id === callId);
      expect(session).toBeDefined();
      return session!.id;
    },
    { timeout: 15_000, interval: 200 },
  );
/** The caller hears the greeting: speech, not silence, on the phone line. */
const greeted = async (stream: FakeCarrierStream) => {
  await vi.waitFor(() => expect(stream.receivedAudio().length).toBeGreaterThan(8000 * 0.5), { timeout: 30_000, interval: 100 });
  expect(dbfs(stream.receivedAudio())).toBeGreaterThan(-40);
};
const hangUpsOf = (callId: string): RecordedRequest[] =>
  nodes.api.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/Calls/${callId}.json`) && (r.body as { Status?: string }).Status === 'completed');

/** An inbound call: the carrier's voice webhook delivered to `node`; the carrier now carries the call. */
async function ring(node: PhoneNode, callId: string) {
  const answered = await sendVoiceWebhook(nodes.signer, webhookUrl, inboundCallParams('twilio', { callId, from: CALLER_NUMBER, to: BUSINESS_NUMBER }), nodes.on(node, webhookUrl));
  expect(answered.status, answered.body).toBe(200);
  nodes.api.addLiveCall(callId, { from: CALLER_NUMBER, to: BUSINESS_NUMBER, statusUrl });
  return streamTargetFromMarkup('twilio', answered.body);
}

describe('phone calls over two nodes on one PostgreSQL', () => {
  it('webhook on A, stream on B: the call runs on B, the status reaches it from A, the flow hangs up from B, billed once; the token is refused on A', { timeout: 120_000 }, async () => {
    const before = await balance(a);
    const callId = 'CA11111111111111111111111111111111';
    const target = await ring(a, callId);
    expect(target.url).toMatch(/^wss:\/\/voice\.example\.com\/telephony\/twilio\/stream\//);

    const stream = await FakeCarrierStream.connect({ carrier: 'twilio', target: { ...target, url: nodes.on(b, target.url) }, callId, from: CALLER_NUMBER, to: BUSINESS_NUMBER });
    await greeted(stream);
    const id = await sessionOfCall(a, callId);
    expect(await detail(a, id)).toMatchObject({ status: 'connected', transport: 'twilio', direction: 'inbound', from: CALLER_NUMBER, to: BUSINESS_NUMBER });

    // The same stream URL, replayed to A after B claimed it, is refused; B's call goes on.
    expect(await closeCode(nodes.on(a, target.url))).toBe(1008);
    expect((await detail(a, id)).status).toBe('connected');

    // The key press reaches B's session: the flow says goodbye and ends the call.
    stream.pressDigit('1');
    await vi.waitFor(async () => expect(await detail(a, id)).toMatchObject({ status: 'ended', end_reason: 'flow_ended' }), { timeout: 30_000, interval: 200 });
    // The path's last move is stored by the session's event writer, which may land a moment after
    // the end itself.
    await vi.waitFor(async () => expect((await detail(b, id)).path.map((p: { state: string }) => p.state)).toEqual(['menu', 'hours']), { timeout: 10_000, interval: 200 });
    // B, which holds the call, hung it up through the carrier's REST API; A never called it.
    await vi.waitFor(() => expect(hangUpsOf(callId)).toHaveLength(1), { timeout: 15_000, interval: 100 });
    expect(b.made(hangUpsOf(callId)[0]!)).toBe(true);
    expect(nodes.api.requests.filter((r) => r.path.includes(callId) && a.made(r))).toEqual([]);
    await stream.waitForClose();

    // The carrier's status callback for the call's end lands on A and reaches the session.
    expect((await nodes.api.sendStatus(callId, nodes.signer, 'completed', (url) => nodes.on(a, url))).status).toBe(204);
    expect((await detail(b, id)).call_status).toBe('completed');

    // The first minute, charged once, whichever node asks.
    const rate = before.effective_rate_per_minute_usd_cents;
    expect(rate).toBeGreaterThan(0);
    expect((await detail(b, id)).credits_charged_usd_cents).toBe(rate);
    for (const node of [a, b]) expect((await balance(node)).balance_usd_cents).toBe(before.balance_usd_cents - rate);
    expect(stream.protocolErrors).toEqual([]);
  });

  it('an outbound call placed on A, answered on B, streamed to A: A holds the call and hangs it up; a status sent to both nodes at once is told once', { timeout: 120_000 }, async () => {
    const receiver = await startWebhookReceiver();
    afterThisTest(() => receiver.close());
    const endpoint = await nodes.request(b, 'POST', '/v1/webhooks', { jwt: account.jwt, body: { url: receiver.url, events: ['call.status'] } });
    expect(endpoint.status, endpoint.text).toBe(201);
    afterThisTest(async () => void (await nodes.request(b, 'DELETE', `/v1/webhooks/${endpoint.body.id}`, { jwt: account.jwt })));
    const before = await balance(b);
    const placed = await nodes.request(a, 'POST', '/v1/calls', { apiKey: account.apiKey, body: { flow_id: flowId, from: BUSINESS_NUMBER, to: CALLEE } });
    expect(placed.status, placed.text).toBe(201);
    const callId = placed.body.carrier_call_id as string;
    const id = placed.body.session_id as string;
    const placing = nodes.api.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/Calls.json'));
    expect(placing).toHaveLength(1);
    expect(a.made(placing[0]!)).toBe(true);
    // The carrier was given the public URL, not A's own address.
    expect(nodes.api.calls.get(callId)!.answerUrl).toMatch(/^https:\/\/voice\.example\.com\/telephony\/twilio\/voice\?/);

    expect((await nodes.api.sendStatus(callId, nodes.signer, 'ringing', (url) => nodes.on(b, url))).status).toBe(204);
    const answered = await nodes.api.answerPlacedCall(callId, nodes.signer, { through: (url) => nodes.on(b, url) });
    expect(answered.status, answered.body).toBe(200);
    // The carrier retries a callback it thinks was lost; the balancer sends the copies to both nodes.
    const copies = await Promise.all([a, b, a, b].map((node) => nodes.api.sendStatus(callId, nodes.signer, 'answered', (url) => nodes.on(node, url))));
    expect(copies.map((c) => c.status)).toEqual([204, 204, 204, 204]);
    expect((await detail(a, id)).call_status).toBe('answered');

    const target = streamTargetFromMarkup('twilio', answered.body);
    const stream = await FakeCarrierStream.connect({ carrier: 'twilio', target: { ...target, url: nodes.on(a, target.url) }, callId, from: BUSINESS_NUMBER, to: CALLEE });
    await greeted(stream);
    expect(await closeCode(nodes.on(b, target.url))).toBe(1008);

    stream.pressDigit('1');
    await vi.waitFor(async () => expect(await detail(b, id)).toMatchObject({ status: 'ended', end_reason: 'flow_ended', direction: 'outbound' }), { timeout: 30_000, interval: 200 });
    await vi.waitFor(() => expect(hangUpsOf(callId)).toHaveLength(1), { timeout: 15_000, interval: 100 });
    expect(a.made(hangUpsOf(callId)[0]!)).toBe(true);
    await stream.waitForClose();
    expect((await nodes.api.sendStatus(callId, nodes.signer, 'completed', (url) => nodes.on(b, url))).status).toBe(204);
    expect((await detail(a, id)).call_status).toBe('completed');
    const rate = before.effective_rate_per_minute_usd_cents;
    expect((await detail(a, id)).credits_charged_usd_cents).toBe(rate);
    expect((await balance(a)).balance_usd_cents).toBe(before.balance_usd_cents - rate);

    // Each step of the call reached the business once, however many nodes heard of it.
    const told = () => receiver.received.filter((r) => r.json?.type === 'call.status' && r.json.data.session_id === id).map((r) => r.json.data.status as string);
    await vi.waitFor(() => expect(told()).toContain('completed'), { timeout: 20_000, interval: 100 });
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // time for a second copy, were one sent
    expect(told().sort()).toEqual(['answered', 'completed', 'ringing']);
  });

  it('a node killed mid-call: another node ends its session (server_restarted), billed once, and hangs the call up at the carrier', { timeout: 120_000 }, async () => {
    const before = await balance(a);
    const doomed = await nodeForThisTest(nodes, 'C');
    const callId = 'CA33333333333333333333333333333333';
    const target = await ring(a, callId);
    const stream = await FakeCarrierStream.connect({ carrier: 'twilio', target: { ...target, url: nodes.on(doomed, target.url) }, callId, from: CALLER_NUMBER, to: BUSINESS_NUMBER });
    await greeted(stream);
    const id = await sessionOfCall(a, callId);

    doomed.process.child.kill('SIGKILL');
    await doomed.process.exited;
    // The carrier sees its stream drop.
    await stream.waitForClose();
    expect((await detail(a, id)).status).toBe('connected');
    // The dead node's last heartbeat, as the others judge it (not the kill: on a loaded machine
    // the last beat may come well before it).
    const db = new pg.Client({ connectionString: nodes.databaseUrl });
    await db.connect();
    let lastSeen: number;
    try {
      const { rows } = await db.query('SELECT n.last_seen_at FROM nodes n JOIN sessions s ON s.node_id = n.id WHERE s.id = $1', [id]);
      expect(rows).toHaveLength(1);
      lastSeen = Number(rows[0].last_seen_at);
    } finally {
      await db.end();
    }

    // Gone once silent for the node timeout: the answer that first shows the end came back at
    // least that long after the last heartbeat.
    let endSeenAt = 0;
    await vi.waitFor(
      async () => {
        const seen = await detail(b, id);
        endSeenAt = Date.now() / 1000;
        expect(seen).toMatchObject({ status: 'ended', end_reason: 'server_restarted' });
      },
      { timeout: 60_000, interval: 250 },
    );
    expect(endSeenAt - lastSeen).toBeGreaterThanOrEqual(NODE_TIMEOUT_SECONDS);
    // A surviving node asked the carrier to hang the call up, once (the call is not billed any more).
    await vi.waitFor(() => expect(hangUpsOf(callId)).toHaveLength(1), { timeout: 20_000, interval: 100 });
    expect(a.made(hangUpsOf(callId)[0]!) || b.made(hangUpsOf(callId)[0]!)).toBe(true);
    expect(nodes.api.calls.get(callId)!.status).toBe('completed');

    const rate = before.effective_rate_per_minute_usd_cents;
    expect((await detail(a, id)).credits_charged_usd_cents).toBe(rate);
    expect((await balance(b)).balance_usd_cents).toBe(before.balance_usd_cents - rate);
  });
});
