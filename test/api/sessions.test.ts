import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let flowId: string;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
  flowId = await createFlow(server, account.apiKey);
});
afterAll(async () => {
  await server.close();
});

describe('starting a session', () => {
  it('returns a session token, its WebSocket URL on the public address, the transport and the credit left', async () => {
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
    expect(response.status).toBe(200);
    const token: string = response.body.session_token;
    expect(token).toMatch(/^[0-9A-Za-z]{20,}$/);
    expect(server.url).toMatch(/^http:\/\//);
    expect(response.body.ws_url).toBe(`${server.url.replace(/^http:/, 'ws:')}/v1/ws/${token}`);
    expect(response.body.transport).toBe('websocket');
    expect(response.body.credits_remaining).toBe(200);
  });

  it('accepts context and metadata objects', async () => {
    const response = await server.request('POST', '/v1/sessions', {
      apiKey: account.apiKey,
      body: { flow_id: flowId, context: { secret_thing: 'a cat', questions_asked: '0' }, metadata: { crm_id: 42, tags: ['vip'] } },
    });
    expect(response.status).toBe(200);
    expect(response.body.session_token).toBeTypeOf('string');
  });

  it('starts a generic assistant session when the request has no body at all', async () => {
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body.transport).toBe('websocket');
    const list = await server.request('GET', '/v1/sessions', { apiKey: account.apiKey });
    expect(list.body[0].token_prefix).toBe(response.body.session_token.slice(0, 12));
    expect(list.body[0].flow_id).toBeNull();
  });

  it('starts a generic assistant session for an empty JSON object', async () => {
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    expect(response.status).toBe(200);
  });

  it('gives every session a different token', async () => {
    const a = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
    const b = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
    expect(a.body.session_token).not.toBe(b.body.session_token);
  });

  it('answers an unknown flow_id with 404 flow_not_found', async () => {
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: 'no-such-flow' } });
    expectError(response, 404, 'flow_not_found');
  });

  it('refuses a JWT with 403 wrong_credential_kind: sessions start from a backend with an API key', async () => {
    const response = await server.request('POST', '/v1/sessions', { jwt: account.jwt, body: { flow_id: flowId } });
    expectError(response, 403, 'wrong_credential_kind');
  });

  it('refuses a request without a credential with 401', async () => {
    expectError(await server.request('POST', '/v1/sessions', { body: {} }), 401, 'missing_credentials');
  });

  it.each([
    ['context is a string', { context: 'secret_thing=cat' }, 'context'],
    ['context is an array', { context: ['cat'] }, 'context'],
    ['metadata is a number', { metadata: 7 }, 'metadata'],
    ['context is over 16 KiB as JSON', { context: { blob: 'x'.repeat(16 * 1024) } }, 'context'],
    ['metadata is over 16 KiB as JSON', { metadata: { blob: 'x'.repeat(16 * 1024) } }, 'metadata'],
    ['flow_id is a number', { flow_id: 5 }, 'flow_id'],
  ])('refuses a request where %s with 422 invalid_request naming the field', async (_what, body, field) => {
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body });
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('accepts a context of just under 16 KiB', async () => {
    const context = { blob: 'x'.repeat(16 * 1024 - 20) };
    expect(Buffer.byteLength(JSON.stringify(context))).toBeLessThanOrEqual(16 * 1024);
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { context } });
    expect(response.status).toBe(200);
  });
});

describe('listing sessions', () => {
  it('shows the latest session with a 12-character token prefix, never the token, its flow_id and no start yet', async () => {
    const started = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
    const token: string = started.body.session_token;
    const list = await server.request('GET', '/v1/sessions', { apiKey: account.apiKey });
    expect(list.status).toBe(200);
    const latest = list.body[0];
    expect(latest.token_prefix).toBe(token.slice(0, 12));
    expect(latest.flow_id).toBe(flowId);
    expect(latest.started_at).toBeNull();
    expect(latest.ended_at).toBeNull();
    expect(list.text).not.toContain(token);
    expect(list.text).not.toContain(token.slice(12));
  });

  it('is readable with a JWT too', async () => {
    const list = await server.request('GET', '/v1/sessions', { jwt: account.jwt });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
  });

  it('lists at most 50 sessions, newest first, when 55 were created', async () => {
    const other = await createAccount(server);
    const start = () => server.request('POST', '/v1/sessions', { apiKey: other.apiKey, body: {} });
    const prefixesOf = (responses: Array<{ status: number; body: any }>) => {
      expect(responses.every((r) => r.status === 200)).toBe(true);
      return responses.map((r) => r.body.session_token.slice(0, 12) as string);
    };
    // Batches started together (the store commits them together); the batches themselves in order.
    const oldest = prefixesOf(await Promise.all(Array.from({ length: 5 }, start)));
    const middle = prefixesOf(await Promise.all(Array.from({ length: 49 }, start)));
    const newest = prefixesOf([await start()]);

    const list = await server.request('GET', '/v1/sessions', { apiKey: other.apiKey });
    expect(list.body).toHaveLength(50);
    const listed: string[] = list.body.map((s: { token_prefix: string }) => s.token_prefix);
    expect(listed[0]).toBe(newest[0]);
    expect(new Set(listed.slice(1))).toEqual(new Set(middle));
    for (const prefix of oldest) expect(listed).not.toContain(prefix);
    const times: number[] = list.body.map((s: { created_at: number }) => s.created_at);
    expect(times).toEqual([...times].sort((x, y) => y - x));
  });

  it('is empty for a new account', async () => {
    const fresh = await createAccount(server);
    const list = await server.request('GET', '/v1/sessions', { apiKey: fresh.apiKey });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
  });
});
