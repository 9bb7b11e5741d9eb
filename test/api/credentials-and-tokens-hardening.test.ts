// A revoked key takes its unused session tokens with it; two credentials of two
// accounts are refused, not silently resolved; API keys never travel in URLs; a token that can
// no longer connect is listed as expired; trivial passwords are refused at signup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ limits: { sessionTokenTtlSeconds: 2 } });
});
afterAll(async () => server?.close());

const upgradeStatus = (path: string, headers: Record<string, string> = {}) =>
  connectVoice(wsUrl(server.url, path), headers).then(
    (client) => {
      client.close();
      return 'opened';
    },
    (error: { status?: number }) => error.status ?? 'failed',
  );

describe('a session token and the API key that asked for it', () => {
  it('dies with the key: after DELETE /auth/api-keys/{id} the unused token opens nothing', async () => {
    const account = await createAccount(server);
    const started = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    expect(started.status).toBe(200);
    const other = await server.request('POST', '/auth/api-keys?label=other', { jwt: account.jwt });
    const survivor = await server.request('POST', '/v1/sessions', { apiKey: other.body.key, body: {} });

    expect((await server.request('DELETE', `/auth/api-keys/${account.apiKeyId}`, { jwt: account.jwt })).status).toBe(204);

    expect(await upgradeStatus(`/v1/ws/${started.body.session_token}`)).toBe(401);
    expect(await upgradeStatus(`/ws?session_token=${started.body.session_token}`)).toBe(401);
    // A token another, live key asked for still works.
    expect(await upgradeStatus(`/v1/ws/${survivor.body.session_token}`)).toBe('opened');
    const list = await server.request('GET', '/v1/sessions', { jwt: account.jwt });
    expect(list.body.find((s: { token_prefix: string }) => started.body.session_token.startsWith(s.token_prefix)).status).toBe('expired');
  });
});

describe('two credentials in one request', () => {
  it('is a 400 when the API key and the access token belong to different accounts', async () => {
    const [a, b] = await Promise.all([createAccount(server), createAccount(server)]);
    const mixed = await server.request('GET', '/v1/flows', { apiKey: a.apiKey, jwt: b.jwt });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.message).toMatch(/different accounts/);
    // …and fine when both are the same account's.
    expect((await server.request('GET', '/v1/flows', { apiKey: a.apiKey, jwt: a.jwt })).status).toBe(200);
    // The same key in both headers is one credential; two different keys are not.
    expect((await server.request('GET', '/v1/flows', { apiKey: a.apiKey, headers: { authorization: `Bearer ${a.apiKey}` } })).status).toBe(200);
    expect((await server.request('GET', '/v1/flows', { apiKey: a.apiKey, headers: { authorization: `Bearer ${b.apiKey}` } })).status).toBe(400);
  });
});

describe('an API key in a URL', () => {
  it('is refused with 400 on the API and on the voice endpoints, even when it is valid', async () => {
    const account = await createAccount(server);
    const flows = await server.request('GET', `/v1/flows?api_key=${account.apiKey}`);
    expect(flows.status).toBe(400);
    expect(flows.body.error.message).toMatch(/X-Service-Key/);
    expect(await upgradeStatus(`/ws?mode=assistant&api_key=${account.apiKey}`)).toBe(400);
    expect((await server.request('GET', `/ice-servers?api_key=${account.apiKey}`)).status).toBe(400);
  });
});

describe('the session list', () => {
  it('says expired for a token whose time ran out, and waiting-to-connect tokens carry their expiry', async () => {
    const account = await createAccount(server);
    const started = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    const fresh = (await server.request('GET', '/v1/sessions', { apiKey: account.apiKey })).body[0];
    expect(fresh).toMatchObject({ status: 'created' });
    expect(fresh.expires_at).toBeGreaterThan(Date.now() / 1000);
    await new Promise((resolve) => setTimeout(resolve, (fresh.expires_at - Date.now() / 1000) * 1000 + 100));
    const later = (await server.request('GET', '/v1/sessions', { apiKey: account.apiKey })).body[0];
    expect(later.status).toBe('expired');
    expect(await upgradeStatus(`/v1/ws/${started.body.session_token}`)).toBe(401);
  });
});

describe('a new password', () => {
  it.each([
    ['only spaces', ' '.repeat(12)],
    ['one of the most common passwords', 'password123'],
    ['a common password in other case', 'PassWord1'],
    ['a run of digits', '123456789'],
  ])('is refused when it is %s', async (_what, password) => {
    const response = await server.request('POST', '/auth/signup', { body: { email: `pw-${Date.now()}-${Math.random()}@example.com`, password } });
    expect(response.status).toBe(422);
    expect(response.body.error.details.map((d: { field: string }) => d.field)).toContain('password');
  });
});
