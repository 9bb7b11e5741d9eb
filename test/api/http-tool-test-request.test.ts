// "Send a test request" for a flow's http tool (POST /v1/flows/{id}/tools/{tool}/test-request):
// the service gets the request a call would send (signed with the account's tool signing secret,
// its secrets filled into the headers), and the designer gets its status, answer and time, with
// no secret in the answer; what a session would refuse (no signing secret, an address inside the
// network) fails the same way; a tool that is not an http tool, or another account's flow, is
// refused; an account cannot flood a service through it.
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAvailabilityService, type AvailabilityService } from '../support/availability-service.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';

const BOOKING = readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
const SIGNING = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const TOKEN = 'clinic-token-value-0001';

describe('an http tool tried from the editor', () => {
  let server: TestServer;
  let hosted: TestServer;
  let service: AvailabilityService;
  beforeAll(async () => {
    service = await startAvailabilityService({ tuesday: { status: 200, json: { available: true, slot: '10:30', echoed: `Bearer ${TOKEN}` } }, friday: { status: 503, json: { error: 'maintenance' } } });
    // Private networks allowed (the service is on loopback), as in the desktop app; and a hosted server.
    [server, hosted] = await Promise.all([startTestServer({ webhooks: { allowPrivate: true } }), startTestServer()]);
  });
  afterAll(async () => {
    await server?.close();
    await hosted?.close();
    await service?.close();
  });

  async function bookingAccount(target: TestServer, withSigning = true) {
    const account = await createAccount(target);
    const flowId = await createFlow(target, account.apiKey, 'Booking', BOOKING.replace('https://clinic.example.com/voxflow/availability', service.url));
    if (withSigning) await target.request('PUT', '/v1/secrets/tool_signing_secret', { jwt: account.jwt, body: { value: SIGNING } });
    await target.request('PUT', '/v1/secrets/clinic_api_token', { jwt: account.jwt, body: { value: TOKEN } });
    return { ...account, flowId };
  }

  const tryTool = (target: TestServer, apiKey: string, flowId: string, tool: string, body: unknown) =>
    target.request('POST', `/v1/flows/${flowId}/tools/${tool}/test-request`, { apiKey, body });

  it('sends the request a call would send, signed and with its secret, and shows the answer, its status and time without the secret', async () => {
    const { apiKey, flowId } = await bookingAccount(server);
    const before = service.received.length;
    const tried = await tryTool(server, apiKey, flowId, 'check_availability', { arguments: { day: 'tuesday' }, variables: { caller: 'Ann' } });
    expect(tried.status, tried.text).toBe(200);
    expect(tried.body).toMatchObject({ ok: true, status: 200, method: 'POST', url: service.url, body: { available: true, slot: '10:30', echoed: '[redacted]' } });
    expect(tried.body.duration_ms).toBeGreaterThanOrEqual(0);
    expect(tried.text).not.toContain(TOKEN);

    expect(service.received.length).toBe(before + 1);
    const received = service.received.at(-1)!;
    expect(received.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(received.json).toEqual({ tool: 'check_availability', arguments: { day: 'tuesday' }, variables: { caller: 'Ann' }, metadata: {}, session_id: 'test-request' });
    const headers = { 'webhook-id': String(received.headers['webhook-id']), 'webhook-timestamp': String(received.headers['webhook-timestamp']), 'webhook-signature': String(received.headers['webhook-signature']) };
    expect(new Webhook(SIGNING).verify(received.body, headers)).toEqual(received.json);

    // A refusal by the service is shown as a call would be told it.
    const refused = await tryTool(server, apiKey, flowId, 'check_availability', { arguments: { day: 'friday' } });
    expect(refused.body).toMatchObject({ ok: false, status: 503 });
    expect(refused.body.error).toMatch(/503/);
  });

  it('fails as a call would without the signing secret, and refuses an address inside the network on a hosted server', async () => {
    const unsigned = await bookingAccount(server, false);
    const before = service.received.length;
    const tried = await tryTool(server, unsigned.apiKey, unsigned.flowId, 'check_availability', { arguments: { day: 'tuesday' } });
    expect(tried.body).toMatchObject({ ok: false, status: null });
    expect(tried.body.error).toContain('tool_signing_secret');

    const onHosted = await bookingAccount(hosted);
    const inside = await tryTool(hosted, onHosted.apiKey, onHosted.flowId, 'check_availability', { arguments: { day: 'tuesday' } });
    expect(inside.body).toMatchObject({ ok: false, status: null });
    expect(inside.body.error).toContain('127.0.0.1');
    expect(service.received.length).toBe(before);
  });

  it('refuses a tool with no http action, an unknown tool or state, and another account\'s flow', async () => {
    const { apiKey, flowId } = await bookingAccount(server);
    const notHttp = await tryTool(server, apiKey, flowId, 'talk_to_human', {});
    expect(notHttp.status).toBe(422);
    expect(notHttp.body.error.message).toContain('no http action');
    expect((await tryTool(server, apiKey, flowId, 'no_such_tool', {})).status).toBe(422);
    expect((await tryTool(server, apiKey, flowId, 'check_availability', { state: 'nowhere' })).body.error.message).toContain('no state "nowhere"');
    expect((await tryTool(server, apiKey, flowId, 'check_availability', { arguments: 'tuesday' })).status).toBe(422);

    const other = await createAccount(server);
    const before = service.received.length;
    const foreign = await tryTool(server, other.apiKey, flowId, 'check_availability', { arguments: { day: 'tuesday' } });
    expect(foreign.status).toBe(404);
    expect(service.received.length).toBe(before);
  });

  it('lets one account send five in five seconds, while another account still sends', async () => {
    const first = await bookingAccount(server);
    const second = await bookingAccount(server);
    // Ten at once: five are sent, the rest refused until the five seconds are over.
    const answers = await Promise.all(Array.from({ length: 10 }, () => tryTool(server, first.apiKey, first.flowId, 'check_availability', { arguments: { day: 'tuesday' } })));
    const limited = answers.filter((a) => a.status === 429 && /test requests in 5 s/.test(a.body.error.message));
    expect(limited.length, answers.map((a) => `${a.status} ${a.text.slice(0, 80)}`).join('\n')).toBeGreaterThanOrEqual(4);
    expect(limited[0]!.headers.get('retry-after')).not.toBeNull();
    expect((await tryTool(server, second.apiKey, second.flowId, 'check_availability', { arguments: { day: 'tuesday' } })).status).toBe(200);
  });
});
