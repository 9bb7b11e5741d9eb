import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let accountId: string;
let flowId: string;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
  accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
  flowId = await createFlow(server, account.apiKey);
});
afterAll(async () => {
  await server.close();
});

const JSON_TYPE = { 'content-type': 'application/json' };
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
// The key the server signs logins with: configured (as on PostgreSQL), or made in its data dir.
const serverJwtKey = () => Buffer.from(server.app.services.config.jwtSecret ?? readFileSync(join(server.dataDir, 'jwt.key'), 'utf8').trim(), 'base64');

function signToken(key: Uint8Array, claims: { sub?: string; iss?: string; aud?: string; exp?: number; iat?: number }) {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt(claims.iat ?? now);
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  jwt.setIssuer(claims.iss ?? 'voxflow').setAudience(claims.aud ?? 'voxflow-api').setExpirationTime(claims.exp ?? now + 3600);
  return jwt.sign(key);
}

describe('unicode', () => {
  const NAMES = [
    ['emoji with joiners and skin tones', '🎲 Game night 👩‍👩‍👧‍👦 👍🏽'],
    ['right-to-left text', 'משחק ניחושים — لعبة التخمين'],
    ['combining characters (not normalised)', 'Cafe\u0301 Ame\u0301lie vs Café'],
    ['CJK and astral-plane characters', '猜谜游戏 𝔊𝔞𝔪𝔢 𠜎'],
  ];

  it.each(NAMES)('keeps a flow name with %s exactly as sent', async (_what, name) => {
    const id = await createFlow(server, account.apiKey, name!);
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.body.name).toBe(name);
    const list = await server.request('GET', '/v1/flows', { apiKey: account.apiKey });
    expect(list.body.find((f: { id: string }) => f.id === id).name).toBe(name);
  });

  it('keeps prompts with emoji, right-to-left text and combining characters exactly, in YAML and in JSON', async () => {
    const prompt = '¡Hola! 🎲 שלום مرحبا Cafe\u0301 👩‍👩‍👧 𝔊';
    const yaml = GUESSING_GAME_YAML.replace(
      'prompt: "Ten questions: the host thinks of something, you have ten yes-or-no questions to guess it."',
      `prompt: "${prompt}"`,
    );
    expect(yaml).not.toBe(GUESSING_GAME_YAML);
    const id = await createFlow(server, account.apiKey, 'Unicode prompts', yaml);
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.body.yaml_content).toBe(yaml);
    const json = await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey });
    expect(json.body.states.setup.ui.prompt).toBe(prompt);

    const changed = `${prompt} — ✓ 終わり`;
    json.body.states.setup.ui.prompt = changed;
    const put = await server.request('PUT', `/v1/flows/${id}/json`, { apiKey: account.apiKey, body: json.body });
    expect(put.status).toBe(200);
    const again = await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey });
    expect(again.body.states.setup.ui.prompt).toBe(changed);
  });
});

describe('credentials that are wrong', () => {
  it.each([
    ['a JWT on POST /v1/sessions', 'POST', '/v1/sessions', 'jwt', 403, 'wrong_credential_kind'],
    ['an API key on POST /auth/api-keys', 'POST', '/auth/api-keys?label=x', 'apiKey', 403, 'wrong_credential_kind'],
    ['an API key on GET /auth/api-keys', 'GET', '/auth/api-keys', 'apiKey', 403, 'wrong_credential_kind'],
    ['an API key on PATCH /v1/providers', 'PATCH', '/v1/providers', 'apiKey', 403, 'wrong_credential_kind'],
    ['no credential on GET /v1/flows', 'GET', '/v1/flows', 'none', 401, 'missing_credentials'],
    ['no credential on GET /v1/sessions', 'GET', '/v1/sessions', 'none', 401, 'missing_credentials'],
    ['no credential on GET /v1/providers', 'GET', '/v1/providers', 'none', 401, 'missing_credentials'],
  ])('refuses %s', async (_what, method, path, kind, status, code) => {
    const credential = kind === 'jwt' ? { jwt: account.jwt } : kind === 'apiKey' ? { apiKey: account.apiKey } : {};
    const body = method === 'GET' ? undefined : { llm_api_key: 'sk-own-0123456789abcd' };
    expectError(await server.request(method, path, { ...credential, body }), status, code);
  });

  it('refuses a JWT with one character of its signature changed with 401 invalid_credentials', async () => {
    const [header, payload, signature] = account.jwt.split('.') as [string, string, string];
    // A middle character: the last one of a base64url signature can carry only padding bits.
    const i = Math.floor(signature.length / 2);
    const flipped = signature[i] === 'A' ? 'B' : 'A';
    const tampered = `${header}.${payload}.${signature.slice(0, i)}${flipped}${signature.slice(i + 1)}`;
    expectError(await server.request('GET', '/v1/flows', { jwt: tampered }), 401, 'invalid_credentials');
  });

  it('refuses a JWT whose payload was changed to another account with 401', async () => {
    const other = await createAccount(server);
    const otherId = (await server.app.services.store.accounts.findByEmail(other.email))!.id;
    const [header, payload, signature] = account.jwt.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${header}.${b64url({ ...claims, sub: otherId })}.${signature}`;
    expectError(await server.request('GET', '/v1/flows', { jwt: forged }), 401, 'invalid_credentials');
  });

  it('refuses an expired JWT signed with the server\'s own key with 401 token_expired', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await signToken(serverJwtKey(), { sub: accountId, iat: now - 2 * 86_400, exp: now - 3_600 });
    expectError(await server.request('GET', '/v1/flows', { jwt: expired }), 401, 'token_expired');
  });

  it('accepts a fresh JWT signed with the server\'s key (the control for the tokens around it)', async () => {
    const fresh = await signToken(serverJwtKey(), { sub: accountId });
    expect((await server.request('GET', '/v1/flows', { jwt: fresh })).status).toBe(200);
  });

  it('refuses an unsigned JWT (alg none) with 401 invalid_credentials', async () => {
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: accountId, iss: 'voxflow', aud: 'voxflow-api', iat: now, exp: now + 3600 })}.`;
    expectError(await server.request('GET', '/v1/flows', { jwt: unsigned }), 401, 'invalid_credentials');
  });

  it('refuses a JWT signed with another key with 401 invalid_credentials', async () => {
    const foreign = await signToken(randomBytes(48), { sub: accountId });
    expectError(await server.request('GET', '/v1/flows', { jwt: foreign }), 401, 'invalid_credentials');
  });

  it.each([
    ['another issuer', { iss: 'someone-else' }],
    ['another audience', { aud: 'another-api' }],
    ['an account that does not exist', { sub: 'no-such-account' }],
  ])('refuses a JWT signed with the server\'s key for %s with 401 invalid_credentials', async (_what, claims) => {
    const token = await signToken(serverJwtKey(), { sub: accountId, ...claims });
    expectError(await server.request('GET', '/v1/flows', { jwt: token }), 401, 'invalid_credentials');
  });

  it('refuses a revoked API key with 401 invalid_credentials', async () => {
    const created = await server.request('POST', '/auth/api-keys?label=revoked', { jwt: account.jwt });
    expect((await server.request('DELETE', `/auth/api-keys/${created.body.id}`, { jwt: account.jwt })).status).toBe(204);
    expectError(await server.request('GET', '/v1/flows', { apiKey: created.body.key }), 401, 'invalid_credentials');
    expectError(await server.request('POST', '/v1/sessions', { apiKey: created.body.key, body: { flow_id: flowId } }), 401, 'invalid_credentials');
  });

  it.each([
    ['an unknown API key', { 'x-service-key': `vfk_${'0'.repeat(43)}` }],
    ['a JWT in X-Service-Key', 'jwt-in-key'],
    ['Basic auth', { authorization: 'Basic dXNlcjpwYXNzd29yZA==' }],
    ['the token without a scheme', 'bare-token'],
    ['an empty Bearer', { authorization: 'Bearer ' }],
    ['a Token scheme', 'token-scheme'],
  ])('refuses %s with 401', async (_what, headersOrKind) => {
    const headers =
      headersOrKind === 'jwt-in-key'
        ? { 'x-service-key': account.jwt }
        : headersOrKind === 'bare-token'
          ? { authorization: account.jwt }
          : headersOrKind === 'token-scheme'
            ? { authorization: `Token ${account.jwt}` }
            : (headersOrKind as Record<string, string>);
    const response = await server.request('GET', '/v1/flows', { headers });
    expect(response.status).toBe(401);
    expect(['invalid_credentials', 'missing_credentials']).toContain(response.body.error.code);
    expectError(response, 401, response.body.error.code);
  });

  it('accepts an API key sent as a Bearer token, as SDKs that only know bearer auth do', async () => {
    const response = await server.request('GET', '/v1/flows', { headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(response.status).toBe(200);
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/v1/nothing-here'],
    ['GET', '/v2/flows'],
    ['POST', '/v1/flows/x/y/z'],
    ['PATCH', '/v1/flows'],
    ['GET', '/auth'],
  ])('%s %s is 404 not_found, with or without a credential', async (method, path) => {
    expectError(await server.request(method, path), 404, 'not_found');
    expectError(await server.request(method, path, { apiKey: account.apiKey }), 404, 'not_found');
  });
});

describe('hostile nesting and malformed addresses', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('refuses a session context nested 100,000 levels deep with 422, not a 500', async () => {
    const rawBody = `{"context":{"deep":${nested(100_000)}}}`;
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });
    expectError(response, 422, 'invalid_request');
  });

  it('answers session metadata nested 5,000 levels deep (10 KB) without a server error', async () => {
    const rawBody = `{"metadata":{"deep":${nested(5_000)}}}`;
    expect(rawBody.length).toBeLessThan(16 * 1024);
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });
    expect(response.status, response.text).not.toBe(500);
    expect([200, 422]).toContain(response.status);
  });

  it('refuses PUT /json with a value nested 50,000 levels deep with 422, not a 500, and keeps the flow', async () => {
    const id = await createFlow(server, account.apiKey, 'Nested');
    const json = (await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey })).body;
    const rawBody = JSON.stringify(json).replace(/}$/, `,"deep":${nested(50_000)}}`);
    const response = await server.request('PUT', `/v1/flows/${id}/json`, { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });
    expect(response.status, response.text).toBe(422);
    expectError(response, 422, response.body.error.code);
    expect((await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.yaml_content).toBe(GUESSING_GAME_YAML);
  });

  it('answers a path with broken percent-encoding with 400 in the API\'s error shape', async () => {
    const response = await server.request('GET', '/v1/flows/%E0%A4%A', { apiKey: account.apiKey });
    expect(response.status).toBe(400);
    expectError(response, 400, response.body?.error?.code ?? 'missing error object');
  });

  it('answers a flow id of 300 characters in the API\'s error shape', async () => {
    const response = await server.request('GET', `/v1/flows/${'x'.repeat(300)}`, { apiKey: account.apiKey });
    expect([404, 414]).toContain(response.status);
    expectError(response, response.status, response.body?.error?.code ?? 'missing error object');
  });
});
