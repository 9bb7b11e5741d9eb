// Bodies that are not JSON objects, flow and sign-in bodies with wrong or missing fields, and
// hostile sizes and documents: each is refused by the request's parsing and validation before
// anything reaches the store, so these run once, not again on PostgreSQL (test/api/bad-input.test.ts
// keeps what does go through the store: unicode kept exactly, credentials that are wrong).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createAccount, startTestServer, type TestServer } from '../../support/server.ts';
import { expectError } from '../error-shape.ts';

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
});
afterAll(async () => {
  await server.close();
});

const JSON_TYPE = { 'content-type': 'application/json' };

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
