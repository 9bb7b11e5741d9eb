import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
});
afterAll(async () => {
  await server.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('creating an API key', () => {
  it('returns 201 with the key once, its label, id and a 12-character prefix of the key', async () => {
    const response = await server.request('POST', '/auth/api-keys?label=backend', { jwt: account.jwt });
    expect(response.status).toBe(201);
    expect(response.body.key).toMatch(/^vfk_[0-9A-Za-z]{20,}$/);
    expect(response.body.label).toBe('backend');
    expect(response.body.id).toBeTypeOf('string');
    expect(response.body.id.length).toBeGreaterThan(0);
    expect(response.body.prefix).toBe(response.body.key.slice(0, 12));
  });

  it('gives every new key a different value', async () => {
    const first = await server.request('POST', '/auth/api-keys?label=one', { jwt: account.jwt });
    const second = await server.request('POST', '/auth/api-keys?label=two', { jwt: account.jwt });
    expect(first.body.key).not.toBe(second.body.key);
    expect(first.body.id).not.toBe(second.body.id);
  });

  it('makes a key that works at once on GET /v1/flows', async () => {
    const created = await server.request('POST', '/auth/api-keys?label=works', { jwt: account.jwt });
    const flows = await server.request('GET', '/v1/flows', { apiKey: created.body.key });
    expect(flows.status).toBe(200);
    expect(Array.isArray(flows.body)).toBe(true);
  });

  it('refuses a label over 100 characters with 422 invalid_request', async () => {
    const response = await server.request('POST', `/auth/api-keys?label=${'l'.repeat(101)}`, { jwt: account.jwt });
    expectError(response, 422, 'invalid_request');
  });
});

describe('listing API keys', () => {
  it('shows id, label, prefix, created_at and last_used_at, and never the key or its hash', async () => {
    const created = await server.request('POST', '/auth/api-keys?label=listed', { jwt: account.jwt });
    const key: string = created.body.key;
    const list = await server.request('GET', '/auth/api-keys', { jwt: account.jwt });
    expect(list.status).toBe(200);
    const item = list.body.find((k: { id: string }) => k.id === created.body.id);
    expect(item).toBeDefined();
    expect(Object.keys(item).sort()).toEqual(['created_at', 'id', 'label', 'last_used_at', 'prefix']);
    expect(item).toMatchObject({ label: 'listed', prefix: key.slice(0, 12), last_used_at: null });
    expect(item.created_at).toBeTypeOf('number');
    expect(list.text).not.toContain(key);
    expect(list.text).not.toContain(key.slice(12));
    expect(list.text).not.toContain(sha256(key));
    expect(list.text).not.toMatch(/hash/i);
  });

  it('records when a key was last used', async () => {
    const created = await server.request('POST', '/auth/api-keys?label=used', { jwt: account.jwt });
    await server.request('GET', '/v1/flows', { apiKey: created.body.key });
    // The use is recorded in the background; give it a moment.
    let item: { last_used_at: number | null } | undefined;
    for (let i = 0; i < 50; i++) {
      const list = await server.request('GET', '/auth/api-keys', { jwt: account.jwt });
      item = list.body.find((k: { id: string }) => k.id === created.body.id);
      if (item?.last_used_at !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(item?.last_used_at).toBeTypeOf('number');
  });
});

describe('revoking an API key', () => {
  it('answers 204, after which the key gets 401 and is gone from the list', async () => {
    const created = await server.request('POST', '/auth/api-keys?label=doomed', { jwt: account.jwt });
    expect((await server.request('GET', '/v1/flows', { apiKey: created.body.key })).status).toBe(200);

    const revoked = await server.request('DELETE', `/auth/api-keys/${created.body.id}`, { jwt: account.jwt });
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');

    expectError(await server.request('GET', '/v1/flows', { apiKey: created.body.key }), 401, 'invalid_credentials');
    const list = await server.request('GET', '/auth/api-keys', { jwt: account.jwt });
    expect(list.body.map((k: { id: string }) => k.id)).not.toContain(created.body.id);
  });

  it('leaves the account\'s other keys working', async () => {
    const keep = await server.request('POST', '/auth/api-keys?label=keep', { jwt: account.jwt });
    const drop = await server.request('POST', '/auth/api-keys?label=drop', { jwt: account.jwt });
    expect((await server.request('DELETE', `/auth/api-keys/${drop.body.id}`, { jwt: account.jwt })).status).toBe(204);
    expect((await server.request('GET', '/v1/flows', { apiKey: keep.body.key })).status).toBe(200);
  });

  it('answers 404 api_key_not_found for an unknown id', async () => {
    expectError(await server.request('DELETE', '/auth/api-keys/no-such-key', { jwt: account.jwt }), 404, 'api_key_not_found');
  });

  it('answers 404 for a key that is already revoked', async () => {
    const created = await server.request('POST', '/auth/api-keys?label=twice', { jwt: account.jwt });
    expect((await server.request('DELETE', `/auth/api-keys/${created.body.id}`, { jwt: account.jwt })).status).toBe(204);
    expectError(await server.request('DELETE', `/auth/api-keys/${created.body.id}`, { jwt: account.jwt }), 404, 'api_key_not_found');
  });
});

describe('credentials on the API key endpoints', () => {
  it.each([
    ['POST', '/auth/api-keys?label=x'],
    ['GET', '/auth/api-keys'],
    ['DELETE', '/auth/api-keys/whatever'],
  ])('%s %s refuses an API key with 403 wrong_credential_kind', async (method, path) => {
    expectError(await server.request(method, path, { apiKey: account.apiKey }), 403, 'wrong_credential_kind');
  });

  it.each([
    ['POST', '/auth/api-keys?label=x'],
    ['GET', '/auth/api-keys'],
    ['DELETE', '/auth/api-keys/whatever'],
  ])('%s %s refuses a request without a credential with 401 missing_credentials', async (method, path) => {
    expectError(await server.request(method, path), 401, 'missing_credentials');
  });

  it('does not let an API key revoke itself', async () => {
    const response = await server.request('DELETE', `/auth/api-keys/${account.apiKeyId}`, { apiKey: account.apiKey });
    expectError(response, 403, 'wrong_credential_kind');
    expect((await server.request('GET', '/v1/flows', { apiKey: account.apiKey })).status).toBe(200);
  });
});
