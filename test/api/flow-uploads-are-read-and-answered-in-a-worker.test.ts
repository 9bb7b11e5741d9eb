import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

// POST /v1/flows and PUT /v1/flows/{id}/json leave their body as bytes for a flow worker, which
// reads and checks it, and quotes the YAML of their answer; GET /v1/flows/{id}/json answers bytes
// made there. A client must not be able to tell: the answers are byte for byte what the main
// thread made of the same flow (GET /v1/flows/{id} is still serialised there), and every body is
// refused as the server's own JSON parser and the route's schema refuse it, with the same status,
// body and headers (a body that cannot be parsed closes the connection).

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;

const JSON_TYPE = { 'content-type': 'application/json' };

// Text that JSON quotes with escapes: quotes, backslashes, a tab, U+2028, and characters past ASCII.
const AWKWARD_YAML = GUESSING_GAME_YAML.replace(/^(id: .*)$/m, '$1\n# "quoted" \\ back\tslash, line\u2028separator, café, 数字, 🎲');

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
});
afterAll(async () => {
  await server?.close();
});

const upload = (rawBody: string | Buffer) => server.request('POST', '/v1/flows', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });

/** The main thread's serialisation of the same flow, with the answer's diagnostics (GET has none). */
async function asTheMainThreadWouldSay(flowId: string, answer: { diagnostics?: unknown }): Promise<string> {
  const stored = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
  expect(stored.status).toBe(200);
  return JSON.stringify({ ...stored.body, diagnostics: answer.diagnostics });
}

describe('a flow upload and a JSON edit', () => {
  it('answer the bytes the main thread would have sent, with its headers', async () => {
    const created = await upload(JSON.stringify({ name: '  Awkward — naïve  ', yaml_content: AWKWARD_YAML }));
    expect(created.status, created.text.slice(0, 300)).toBe(201);
    expect(created.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(created.body.yaml_content).toBe(AWKWARD_YAML);
    expect(created.body.name).toBe('Awkward — naïve');
    expect(created.text).toBe(await asTheMainThreadWouldSay(created.body.id, created.body));
    expect(Number(created.headers.get('content-length'))).toBe(Buffer.byteLength(created.text));

    const json = await server.request('GET', `/v1/flows/${created.body.id}/json`, { apiKey: account.apiKey });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(json.text).toBe(JSON.stringify(json.body));
    expect(Number(json.headers.get('content-length'))).toBe(Buffer.byteLength(json.text));

    const edited = await server.request('PUT', `/v1/flows/${created.body.id}/json`, { apiKey: account.apiKey, body: { ...json.body, initial_state: json.body.initial_state } });
    expect(edited.status, edited.text.slice(0, 300)).toBe(200);
    expect(edited.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(edited.text).toBe(await asTheMainThreadWouldSay(created.body.id, edited.body));
  });

  it('takes a body that starts with a byte-order mark, as the server’s JSON parser does', async () => {
    const created = await upload(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ name: 'Marked', yaml_content: GUESSING_GAME_YAML }))]));
    expect(created.status, created.text.slice(0, 300)).toBe(201);
    expect(created.body.name).toBe('Marked');
  });
});

describe('POST /v1/flows with a body the server refuses', () => {
  it.each([
    ['a truncated object', '{"name": "x", "yaml_content": '],
    ['plain words', 'hello world'],
    ['a __proto__ key', '{"__proto__": {"admin": true}, "name": "x", "yaml_content": "id: x"}'],
    ['an escaped __proto__ key deep inside', '{"name": "x", "yaml_content": "id: x", "more": [{"\\u005f_proto__": {}}]}'],
    ['a constructor.prototype key', '{"constructor": {"prototype": {}}, "name": "x", "yaml_content": "id: x"}'],
  ])('refuses %s with 400 malformed_json in the parser’s words, and closes the connection', async (_what, rawBody) => {
    const response = await upload(rawBody);
    expectError(response, 400, 'malformed_json');
    expect(response.body.error).toEqual({ code: 'malformed_json', message: 'The request body is not valid JSON.' });
    expect(response.headers.get('connection')).toBe('close');
  });

  it('refuses a body nested 65 levels deep with 422, and closes the connection', async () => {
    const response = await upload(`{"name": "x", "yaml_content": "id: x", "deep": ${'['.repeat(65)}${']'.repeat(65)}}`);
    expectError(response, 422, 'invalid_request');
    expect(response.body.error).toEqual({ code: 'invalid_request', message: 'The body is nested more than 64 levels deep.' });
    expect(response.headers.get('connection')).toBe('close');
  });

  it.each([
    ['JSON null', 'null', { code: 'invalid_request', message: 'The request needs a JSON object body.' }],
    ['an empty body', '  \n', { code: 'invalid_request', message: 'The request needs a JSON object body.' }],
    ['a JSON array', '[]', { code: 'invalid_request', message: 'The body is not valid: body: Invalid input: expected object, received array.', details: [{ field: 'body', message: 'Invalid input: expected object, received array' }] }],
    [
      'a blank name and no YAML',
      '{"name": "   "}',
      {
        code: 'invalid_request',
        message: 'The body is not valid: name: must not be empty; yaml_content: must be the YAML document as a string.',
        details: [
          { field: 'name', message: 'must not be empty' },
          { field: 'yaml_content', message: 'must be the YAML document as a string' },
        ],
      },
    ],
    [
      'a NUL in the YAML',
      '{"name": "x", "yaml_content": "id: x\\u0000"}',
      { code: 'invalid_request', message: 'The body is not valid: yaml_content: must not contain the NUL character (U+0000).', details: [{ field: 'yaml_content', message: 'must not contain the NUL character (U+0000)' }] },
    ],
  ])('refuses %s with 422 in the route’s words, the connection kept', async (_what, rawBody, error) => {
    const response = await upload(rawBody);
    expectError(response, 422, 'invalid_request');
    expect(response.body.error).toEqual(error);
    expect(response.headers.get('connection')).not.toBe('close');
  });

  it('creates nothing for any of them', async () => {
    const listed = await server.request('GET', '/v1/flows', { apiKey: account.apiKey });
    expect(listed.body.map((f: { name: string }) => f.name).sort()).toEqual(['Awkward — naïve', 'Marked']);
  });
});
