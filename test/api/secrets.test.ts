import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, storedAtRest, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

const VALUE = 'crm-live-9f8e7d6c5b4a39281716';

describe('/v1/secrets: an account\'s named secrets for flow http tools', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('sets a secret, lists its name and dates but never its value, replaces and deletes it', async () => {
    const { jwt, apiKey } = await createAccount(server);
    const created = await server.request('PUT', '/v1/secrets/crm_token', { jwt, body: { value: VALUE } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'crm_token', created_at: expect.any(Number), updated_at: expect.any(Number) });
    expect(created.headers.get('cache-control')).toBe('no-store');

    const replaced = await server.request('PUT', '/v1/secrets/crm_token', { jwt, body: { value: `${VALUE}-2` } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.created_at).toBe(created.body.created_at);

    for (const credential of [{ jwt }, { apiKey }]) {
      const listed = await server.request('GET', '/v1/secrets', credential);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([{ name: 'crm_token', created_at: created.body.created_at, updated_at: expect.any(Number) }]);
      expect(listed.text).not.toContain('crm-live');
    }

    expect((await server.request('DELETE', '/v1/secrets/crm_token', { jwt })).status).toBe(204);
    expect((await server.request('GET', '/v1/secrets', { jwt })).body).toEqual([]);
    expectError(await server.request('DELETE', '/v1/secrets/crm_token', { jwt }), 404, 'secret_not_found');
  });

  it('stores the value sealed: it appears nowhere the server keeps data', async () => {
    const { jwt } = await createAccount(server);
    await server.request('PUT', '/v1/secrets/plain_check_name', { jwt, body: { value: VALUE } });
    const contents = (await storedAtRest(server)).map((item) => item.bytes);
    // A control: the search does see what the store wrote (the secret's name is there).
    expect(contents.some((bytes) => bytes.includes(Buffer.from('plain_check_name')))).toBe(true);
    for (const bytes of contents) expect(bytes.includes(Buffer.from(VALUE))).toBe(false);
  });

  it('keeps each account\'s secrets to itself', async () => {
    const a = await createAccount(server);
    const b = await createAccount(server);
    await server.request('PUT', '/v1/secrets/shared_name', { jwt: a.jwt, body: { value: VALUE } });
    expect((await server.request('GET', '/v1/secrets', { jwt: b.jwt })).body).toEqual([]);
    expectError(await server.request('DELETE', '/v1/secrets/shared_name', { jwt: b.jwt }), 404, 'secret_not_found');
    expect((await server.request('GET', '/v1/secrets', { jwt: a.jwt })).body).toHaveLength(1);
  });

  it('refuses bad names, bad bodies, a malformed signing secret, and changes by API key', async () => {
    const { jwt, apiKey } = await createAccount(server);
    expectError(await server.request('PUT', '/v1/secrets/has%20space', { jwt, body: { value: VALUE } }), 422, 'invalid_request');
    expectError(await server.request('PUT', `/v1/secrets/${'x'.repeat(65)}`, { jwt, body: { value: VALUE } }), 422, 'invalid_request');
    expectError(await server.request('PUT', '/v1/secrets/ok', { jwt, body: { value: '' } }), 422, 'invalid_request');
    expectError(await server.request('PUT', '/v1/secrets/ok', { jwt, body: { value: VALUE, extra: 1 } }), 422, 'invalid_request');
    expectError(await server.request('PUT', '/v1/secrets/ok', { jwt, body: { value: 42 } }), 422, 'invalid_request');
    expectError(await server.request('PUT', '/v1/secrets/tool_signing_secret', { jwt, body: { value: 'short' } }), 422, 'invalid_request');
    expect((await server.request('PUT', '/v1/secrets/tool_signing_secret', { jwt, body: { value: `whsec_${Buffer.alloc(24, 7).toString('base64')}` } })).status).toBe(201);
    expectError(await server.request('PUT', '/v1/secrets/ok', { apiKey, body: { value: VALUE } }), 403, 'wrong_credential_kind');
    expectError(await server.request('GET', '/v1/secrets'), 401, 'missing_credentials');
    expect((await server.request('GET', '/v1/secrets', { jwt })).body.map((s: { name: string }) => s.name)).toEqual(['tool_signing_secret']);
  });
});
