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

describe('bodies that are not JSON objects', () => {
  it.each([
    ['a truncated object', '{"name": "x", "yaml_content": '],
    ['single quotes', "{'name': 'x'}"],
    ['a trailing comma', '{"name": "x",}'],
    ['plain words', 'hello world'],
  ])('refuses %s with 400 malformed_json', async (_what, rawBody) => {
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });
    expectError(response, 400, 'malformed_json');
  });

  it.each([
    ['__proto__', '{"__proto__": {"admin": true}, "name": "x", "yaml_content": "id: x"}'],
    ['constructor.prototype', '{"constructor": {"prototype": {"admin": true}}, "name": "x", "yaml_content": "id: x"}'],
  ])('refuses a body with a %s key (prototype poisoning) with 400 malformed_json', async (_what, rawBody) => {
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });
    expectError(response, 400, 'malformed_json');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['XML', 'application/xml'],
  ])('refuses a %s body with 415 unsupported_media_type', async (_what, contentType) => {
    const response = await server.request('POST', '/v1/flows', {
      apiKey: account.apiKey,
      rawBody: JSON.stringify({ name: 'x', yaml_content: GUESSING_GAME_YAML }),
      headers: { 'content-type': contentType },
    });
    expectError(response, 415, 'unsupported_media_type');
  });

  it('treats an empty body sent as application/json as no body: 422 where a body is needed', async () => {
    for (const rawBody of ['', '  \n']) {
      const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });
      expectError(response, 422, 'invalid_request');
    }
  });

  it('treats an empty body sent as application/json as no body: a session starts where none is needed', async () => {
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, rawBody: '', headers: JSON_TYPE });
    expect(response.status).toBe(200);
    expect(response.body.transport).toBe('websocket');
  });

  it.each([
    ['JSON null', 'null'],
    ['a JSON array', '[{"name": "x"}]'],
    ['a JSON string', '"name"'],
    ['a JSON number', '42'],
  ])('refuses %s as a flow body with 422 invalid_request', async (_what, rawBody) => {
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });
    expectError(response, 422, 'invalid_request');
  });
});

describe('flow bodies with wrong or missing fields', () => {
  it.each([
    ['name is a number', { name: 5, yaml_content: GUESSING_GAME_YAML }, ['name']],
    ['yaml_content is an object', { name: 'x', yaml_content: {} }, ['yaml_content']],
    ['yaml_content is the parsed document instead of text', { name: 'x', yaml_content: { id: 'x', states: {} } }, ['yaml_content']],
    ['name is null', { name: null, yaml_content: GUESSING_GAME_YAML }, ['name']],
    ['name is empty', { name: '', yaml_content: GUESSING_GAME_YAML }, ['name']],
    ['name is only spaces', { name: '   ', yaml_content: GUESSING_GAME_YAML }, ['name']],
    ['name is over 200 characters', { name: 'n'.repeat(201), yaml_content: GUESSING_GAME_YAML }, ['name']],
    ['both fields are missing', {}, ['name', 'yaml_content']],
    ['yaml_content is missing', { name: 'x' }, ['yaml_content']],
    ['name is missing', { yaml_content: GUESSING_GAME_YAML }, ['name']],
  ])('refuses a flow whose %s with 422 invalid_request naming the field', async (_what, body, fields) => {
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body });
    expectError(response, 422, 'invalid_request');
    const named = response.body.error.details.map((d: { field: string }) => d.field);
    for (const field of fields) expect(named).toContain(field);
  });

  it.each([
    ['signup', '/auth/signup', { email: 5, password: 'long enough password' }, 'email'],
    ['signup', '/auth/signup', { email: 'x@example.com', password: 12345678 }, 'password'],
    ['login', '/auth/login', { email: ['x@example.com'], password: 'long enough password' }, 'email'],
  ])('refuses a %s body with a wrong type with 422 invalid_request naming the field', async (_what, path, body, field) => {
    const response = await server.request('POST', path, { body });
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });
});

describe('sizes and hostile documents', () => {
  it('refuses a body over 512 KiB with 413 payload_too_large', async () => {
    const response = await server.request('POST', '/v1/flows', {
      apiKey: account.apiKey,
      body: { name: 'big', yaml_content: `${GUESSING_GAME_YAML}\n# ${'x'.repeat(520 * 1024)}\n` },
    });
    expectError(response, 413, 'payload_too_large');
  });

  it('refuses a YAML document over 256 KiB in a body under the limit with 422 document_too_large', async () => {
    const yaml = `${GUESSING_GAME_YAML}\n# ${'x'.repeat(300 * 1024)}\n`;
    const body = { name: 'too large', yaml_content: yaml, padding: 'p'.repeat(90 * 1024) };
    const size = Buffer.byteLength(JSON.stringify(body));
    expect(size).toBeGreaterThan(390 * 1024);
    expect(size).toBeLessThan(512 * 1024);
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body });
    expectError(response, 422, 'invalid_flow');
    expect(response.body.error.details.map((d: { code: string }) => d.code)).toEqual(['document_too_large']);
  });

  it('refuses a nested YAML alias bomb with 422 too_many_aliases, quickly', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    const names = 'abcdefghi';
    for (let i = 1; i < names.length; i++) levels.push(`${names[i]}: &${names[i]} [${Array(10).fill(`*${names[i - 1]}`).join(',')}]`);
    const started = performance.now();
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'bomb', yaml_content: levels.join('\n') } });
    expect(performance.now() - started).toBeLessThan(3_000);
    expectError(response, 422, 'invalid_flow');
    expect(response.body.error.details.map((d: { code: string }) => d.code)).toContain('too_many_aliases');
    // The server is still answering.
    expect((await server.request('GET', '/health')).status).toBe(200);
  });

  it('refuses a flow nested thousands deep with 422 too_deeply_nested: the limit and the line where it went past it, not a stack overflow', { timeout: 60_000 }, async () => {
    const yaml = `${GUESSING_GAME_YAML}\nextra:\n  deep: ${'['.repeat(5_000)}${']'.repeat(5_000)}\n`;
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'deep', yaml_content: yaml } });
    expectError(response, 422, 'invalid_flow');
    expect(response.text).not.toMatch(/call stack/i);
    const deepLine = yaml.split('\n').findIndex((l) => l.startsWith('  deep:')) + 1;
    expect(response.body.error.details).toEqual([expect.objectContaining({ code: 'too_deeply_nested', line: deepLine, message: expect.stringContaining('at most 64') })]);
    expect(response.body.error.message).toContain(`line ${deepLine}`);
  });

  it('refuses a document with more than 100 aliases with 422 too_many_aliases', async () => {
    const aliases = Array.from({ length: 101 }, (_, i) => `  k${i}: *t`).join('\n');
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'aliases', yaml_content: `text: &t hello\nmore:\n${aliases}\n` } });
    expectError(response, 422, 'invalid_flow');
    expect(response.body.error.details.map((d: { code: string }) => d.code)).toContain('too_many_aliases');
  });
});

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
