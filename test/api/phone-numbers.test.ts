// /v1/phone-numbers: binding a carrier's number to a flow, and what to paste into the carrier's
// console; /v1/do-not-call; and the carriers' credentials on /v1/providers, sealed at rest.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { carrierCredentials } from '../../server/security/carrier-credentials.ts';
import { createAccount, createFlow, startTestServer, storedAtRest, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

let numbers = 0;
/** A number no other test of the file binds (numbers are unique over the whole server). */
const freshNumber = () => `+1555${String(Date.now() % 1_000_000).padStart(6, '0')}${++numbers % 10}`;

describe('/v1/phone-numbers', () => {
  it('binds a number to a published flow, tells the webhook URLs to paste, lists it, reads it and deletes it', async () => {
    const { jwt, apiKey } = await createAccount(server);
    const flowId = await createFlow(server, apiKey);
    const number = freshNumber();
    const created = await server.request('POST', '/v1/phone-numbers', { jwt, body: { carrier: 'twilio', number, flow_id: flowId, label: 'Front desk' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      carrier: 'twilio',
      number,
      flow_id: flowId,
      label: 'Front desk',
      webhook_url: `${server.url}/telephony/twilio/voice`,
      status_url: `${server.url}/telephony/twilio/status`,
      created_at: expect.any(Number),
      last_call_at: null,
      last_call_status: null,
    });

    for (const credential of [{ jwt }, { apiKey }]) {
      expect((await server.request('GET', '/v1/phone-numbers', credential)).body).toEqual([created.body]);
      expect((await server.request('GET', `/v1/phone-numbers/${created.body.id}`, credential)).body).toEqual(created.body);
    }
    // The flow cannot go while the number answers with it.
    const inUse = await server.request('DELETE', `/v1/flows/${flowId}`, { apiKey });
    expectError(inUse, 409, 'flow_in_use');
    expect(inUse.body.error.message).toContain(number);

    expect((await server.request('DELETE', `/v1/phone-numbers/${created.body.id}`, { jwt })).status).toBe(204);
    expectError(await server.request('GET', `/v1/phone-numbers/${created.body.id}`, { jwt }), 404, 'phone_number_not_found');
    expect((await server.request('GET', '/v1/phone-numbers', { apiKey })).body).toEqual([]);
    expect((await server.request('DELETE', `/v1/flows/${flowId}`, { apiKey })).status).toBe(204);
  });

  it('refuses a number another account holds without saying whose, and frees it once deleted', async () => {
    const a = await createAccount(server);
    const b = await createAccount(server);
    const number = freshNumber();
    const held = await server.request('POST', '/v1/phone-numbers', { jwt: a.jwt, body: { carrier: 'twilio', number, flow_id: await createFlow(server, a.apiKey) } });
    expect(held.status).toBe(201);

    const bFlow = await createFlow(server, b.apiKey);
    for (const carrier of ['twilio', 'telnyx']) {
      const taken = await server.request('POST', '/v1/phone-numbers', { jwt: b.jwt, body: { carrier, number, flow_id: bFlow } });
      expectError(taken, 409, 'phone_number_taken');
      expect(taken.text).not.toContain(a.email);
      expect(taken.text).not.toContain(held.body.id);
    }
    expectError(await server.request('POST', '/v1/phone-numbers', { jwt: a.jwt, body: { carrier: 'twilio', number, flow_id: held.body.flow_id } }), 409, 'phone_number_taken');

    expect((await server.request('DELETE', `/v1/phone-numbers/${held.body.id}`, { jwt: a.jwt })).status).toBe(204);
    expect((await server.request('POST', '/v1/phone-numbers', { jwt: b.jwt, body: { carrier: 'telnyx', number, flow_id: bFlow } })).status).toBe(201);
  });

  it("keeps each account's numbers to itself: another account's number reads, and deletes, as absent", async () => {
    const a = await createAccount(server);
    const b = await createAccount(server);
    const held = await server.request('POST', '/v1/phone-numbers', { jwt: a.jwt, body: { carrier: 'plivo', number: freshNumber(), flow_id: await createFlow(server, a.apiKey) } });
    expectError(await server.request('GET', `/v1/phone-numbers/${held.body.id}`, { jwt: b.jwt }), 404, 'phone_number_not_found');
    expectError(await server.request('DELETE', `/v1/phone-numbers/${held.body.id}`, { jwt: b.jwt }), 404, 'phone_number_not_found');
    expect((await server.request('GET', '/v1/phone-numbers', { apiKey: b.apiKey })).body).toEqual([]);
    expect((await server.request('GET', `/v1/phone-numbers/${held.body.id}`, { apiKey: a.apiKey })).status).toBe(200);
  });

  it("refuses a number bound to another account's flow, or to none", async () => {
    const a = await createAccount(server);
    const b = await createAccount(server);
    const bFlow = await createFlow(server, b.apiKey);
    expectError(await server.request('POST', '/v1/phone-numbers', { jwt: a.jwt, body: { carrier: 'twilio', number: freshNumber(), flow_id: bFlow } }), 404, 'flow_not_found');
    expectError(await server.request('POST', '/v1/phone-numbers', { jwt: a.jwt, body: { carrier: 'twilio', number: freshNumber(), flow_id: 'no-such-flow' } }), 404, 'flow_not_found');
  });

  it('refuses numbers that are not E.164 for a carrier, bad bodies, and writes with an API key', async () => {
    const { jwt, apiKey } = await createAccount(server);
    const flowId = await createFlow(server, apiKey);
    for (const number of ['5551234567', '+0551234567', '+1 555 123 4567', '+15551234567890123', '+123']) {
      const refused = await server.request('POST', '/v1/phone-numbers', { jwt, body: { carrier: 'twilio', number, flow_id: flowId } });
      expectError(refused, 422, 'invalid_request');
      expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'number' })]);
    }
    expectError(await server.request('POST', '/v1/phone-numbers', { jwt, body: { carrier: 'skype', number: freshNumber(), flow_id: flowId } }), 422, 'invalid_request');
    expectError(await server.request('POST', '/v1/phone-numbers', { jwt, body: { carrier: 'twilio', number: freshNumber(), flow_id: flowId, extra: 1 } }), 422, 'invalid_request');
    expectError(await server.request('POST', '/v1/phone-numbers', { jwt, body: { carrier: 'sip', number: 'front desk@example.com', flow_id: flowId } }), 422, 'invalid_request');
    // A SIP number is the called user part; it has no carrier webhook to paste.
    const sip = await server.request('POST', '/v1/phone-numbers', { jwt, body: { carrier: 'sip', number: `desk-${numbers++}-${Date.now()}`, flow_id: flowId } });
    expect(sip.status).toBe(201);
    expect(sip.body).toMatchObject({ webhook_url: null, status_url: null });

    expectError(await server.request('POST', '/v1/phone-numbers', { apiKey, body: { carrier: 'twilio', number: freshNumber(), flow_id: flowId } }), 403, 'wrong_credential_kind');
    expectError(await server.request('DELETE', `/v1/phone-numbers/${sip.body.id}`, { apiKey }), 403, 'wrong_credential_kind');
    expectError(await server.request('GET', '/v1/phone-numbers'), 401, 'missing_credentials');
  });
});

describe('/v1/do-not-call', () => {
  it('adds a number once, lists it for either credential, removes it, and refuses what is not E.164 or comes with an API key', async () => {
    const { jwt, apiKey } = await createAccount(server);
    const other = await createAccount(server);
    const added = await server.request('POST', '/v1/do-not-call', { jwt, body: { number: '+15557654321' } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ number: '+15557654321', created_at: expect.any(Number) });
    expect((await server.request('POST', '/v1/do-not-call', { jwt, body: { number: '+15557654321' } })).status).toBe(200);

    for (const credential of [{ jwt }, { apiKey }]) expect((await server.request('GET', '/v1/do-not-call', credential)).body).toEqual([added.body]);
    expect((await server.request('GET', '/v1/do-not-call', { jwt: other.jwt })).body).toEqual([]);
    expectError(await server.request('DELETE', '/v1/do-not-call/%2B15557654321', { jwt: other.jwt }), 404, 'do_not_call_not_found');

    expectError(await server.request('POST', '/v1/do-not-call', { jwt, body: { number: '555-1234' } }), 422, 'invalid_request');
    expectError(await server.request('POST', '/v1/do-not-call', { apiKey, body: { number: '+15557654322' } }), 403, 'wrong_credential_kind');
    expectError(await server.request('DELETE', '/v1/do-not-call/%2B15557654321', { apiKey }), 403, 'wrong_credential_kind');

    expect((await server.request('DELETE', '/v1/do-not-call/%2B15557654321', { jwt })).status).toBe(204);
    expect((await server.request('GET', '/v1/do-not-call', { jwt })).body).toEqual([]);
    expectError(await server.request('DELETE', '/v1/do-not-call/+15557654321', { jwt }), 404, 'do_not_call_not_found');
  });
});

describe('carrier credentials on /v1/providers', () => {
  const sid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  const telnyxKey = `KEY${randomBytes(20).toString('hex')}`;
  const publicKey = randomBytes(32).toString('base64');

  it('saves them with a JWT, shows the secrets masked and the rest whole, and clears a field with null', async () => {
    const { jwt, apiKey, email } = await createAccount(server);
    const patched = await server.request('PATCH', '/v1/providers', {
      jwt,
      body: { twilio_account_sid: sid, twilio_auth_token: authToken, telnyx_api_key: telnyxKey, telnyx_public_key: publicKey },
    });
    expect(patched.status).toBe(200);
    const expected = {
      twilio_account_sid: sid,
      twilio_auth_token: `${authToken.slice(0, 3)}…${authToken.slice(-4)}`,
      telnyx_api_key: `${telnyxKey.slice(0, 3)}…${telnyxKey.slice(-4)}`,
      telnyx_public_key: publicKey,
      plivo_auth_id: null,
      plivo_auth_token: null,
    };
    expect(patched.body).toMatchObject(expected);
    for (const credential of [{ jwt }, { apiKey }]) {
      const read = await server.request('GET', '/v1/providers', credential);
      expect(read.body).toMatchObject(expected);
      expect(read.text).not.toContain(authToken);
      expect(read.text).not.toContain(telnyxKey);
    }

    // What a call reads to speak to the carrier: every field of that carrier, in clear, and nothing else.
    const accountId = (await server.app.services.store.accounts.findByEmail(email))!.id;
    expect(await carrierCredentials(server.app.services.store.providers, server.app.services.secrets, accountId, 'twilio')).toEqual({ account_sid: sid, auth_token: authToken });
    expect(await carrierCredentials(server.app.services.store.providers, server.app.services.secrets, accountId, 'telnyx')).toEqual({ api_key: telnyxKey, public_key: publicKey });
    expect(await carrierCredentials(server.app.services.store.providers, server.app.services.secrets, accountId, 'plivo')).toEqual({});

    const cleared = await server.request('PATCH', '/v1/providers', { jwt, body: { twilio_auth_token: null } });
    expect(cleared.body).toMatchObject({ ...expected, twilio_auth_token: null });
    expectError(await server.request('PATCH', '/v1/providers', { apiKey, body: { twilio_auth_token: authToken } }), 403, 'wrong_credential_kind');
  });

  it('refuses credentials of the wrong shape and saves nothing of the request', async () => {
    const { jwt } = await createAccount(server);
    for (const body of [
      { twilio_account_sid: 'AC123' },
      { twilio_account_sid: `AC${'G'.repeat(32)}`, twilio_auth_token: authToken },
      { telnyx_public_key: randomBytes(31).toString('base64') },
      { telnyx_public_key: 'not base64!' },
      { plivo_auth_id: 'MA123' },
      { twilio_auth_token: 'short' },
    ]) {
      const refused = await server.request('PATCH', '/v1/providers', { jwt, body });
      expectError(refused, 422, 'invalid_request');
    }
    expect((await server.request('GET', '/v1/providers', { jwt })).body).toMatchObject({ twilio_account_sid: null, twilio_auth_token: null, telnyx_public_key: null, plivo_auth_id: null });
  });

  it('keeps the secrets sealed: they appear nowhere the server keeps data', async () => {
    const { jwt } = await createAccount(server);
    const plivoId = `MA${randomBytes(9).toString('hex').toUpperCase()}`;
    const plivoToken = `plivo-${randomBytes(12).toString('hex')}`;
    await server.request('PATCH', '/v1/providers', { jwt, body: { plivo_auth_id: plivoId, plivo_auth_token: plivoToken, twilio_auth_token: authToken } });
    const contents = (await storedAtRest(server)).map((item) => item.bytes);
    // A control: the search does see what the store wrote (the Auth ID is not a secret, kept plain).
    expect(contents.some((bytes) => bytes.includes(Buffer.from(plivoId)))).toBe(true);
    for (const bytes of contents) {
      expect(bytes.includes(Buffer.from(plivoToken))).toBe(false);
      expect(bytes.includes(Buffer.from(authToken))).toBe(false);
    }
  });
});

describe('phone calls on /v1/sessions', () => {
  it('lists a call with its numbers masked, and shows the call in full in its detail', async () => {
    const { jwt, apiKey, email } = await createAccount(server);
    const { store } = server.app.services;
    // The carriers' webhooks that make such sessions are another part's: the session is made as they make it.
    const accountId = (await store.accounts.findByEmail(email))!.id;
    const call = await store.sessions.create({
      accountId,
      flowId: null,
      tokenHash: randomBytes(16).toString('hex'),
      tokenPrefix: 'tok',
      transport: 'telnyx',
      mode: 'assistant',
      context: {},
      metadata: {},
      expiresAt: Date.now() / 1000 + 60,
      phone: { direction: 'inbound', from: '+442071234567', to: '+15551234567', carrierCallId: 'v3:call', callStatus: 'answered' },
    });
    await store.sessions.setTransferredTo(call.id, '+15559876543');

    const listed = await server.request('GET', '/v1/sessions', { apiKey });
    expect(listed.body).toEqual([expect.objectContaining({ id: call.id, transport: 'telnyx', from: '+44207•••4567', to: '+1555•••4567' })]);
    expect(listed.text).not.toContain('2071234567');

    const detail = await server.request('GET', `/v1/sessions/${call.id}`, { jwt });
    expect(detail.body).toMatchObject({
      id: call.id,
      transport: 'telnyx',
      direction: 'inbound',
      from: '+442071234567',
      to: '+15551234567',
      carrier_call_id: 'v3:call',
      call_status: 'answered',
      transferred_to: '+15559876543',
    });
  });

  it('shows no phone side for a session that is not a call', async () => {
    const { apiKey } = await createAccount(server);
    const created = await server.request('POST', '/v1/sessions', { apiKey, body: {} });
    expect(created.status).toBe(200);
    const [listed] = (await server.request('GET', '/v1/sessions', { apiKey })).body;
    expect(listed).toMatchObject({ from: null, to: null });
    expect((await server.request('GET', `/v1/sessions/${listed.id}`, { apiKey })).body).toMatchObject({
      direction: null,
      from: null,
      to: null,
      carrier_call_id: null,
      call_status: null,
      transferred_to: null,
    });
  });
});
