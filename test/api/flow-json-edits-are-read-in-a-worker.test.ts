import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

// PUT /v1/flows/{id}/json takes its body as text and has it parsed in a flow worker, not on the
// thread that paces audio (docs/benchmarks.md#what-the-figures-rest-on). A client must not be able
// to tell: every body the other routes refuse is refused here with the same code, nothing of the
// flow changes, and GET /json, now made as text in the worker, still answers the document as JSON.

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let flowId: string;

const JSON_TYPE = { 'content-type': 'application/json' };

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
  flowId = await createFlow(server, account.apiKey);
});
afterAll(async () => {
  await server?.close();
});

const put = (rawBody: string) => server.request('PUT', `/v1/flows/${flowId}/json`, { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });

async function expectFlowUnchanged(): Promise<void> {
  const stored = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
  expect(stored.body.yaml_content).toBe(GUESSING_GAME_YAML);
}

describe('PUT /v1/flows/{id}/json with a body that is not a flow document as a JSON object', () => {
  it.each([
    ['a truncated object', '{"id": "x", "states": '],
    ['single quotes', "{'id': 'x'}"],
    ['plain words', 'hello world'],
    ['a __proto__ key', '{"__proto__": {"admin": true}, "id": "guessing-game"}'],
    ['a __proto__ key deep inside', '{"id": "guessing-game", "states": {"a": {"__proto__": {"admin": true}}}}'],
    ['a constructor.prototype key', '{"constructor": {"prototype": {"admin": true}}, "id": "guessing-game"}'],
  ])('refuses %s with 400 malformed_json and keeps the flow', async (_what, rawBody) => {
    expectError(await put(rawBody), 400, 'malformed_json');
    await expectFlowUnchanged();
  });

  it.each([
    ['a JSON array', '[{"id": "x"}]', 'body'],
    ['a JSON string', '"id: x"', 'body'],
    ['a JSON number', '42', 'body'],
  ])('refuses %s with 422 invalid_request naming the body, and keeps the flow', async (_what, rawBody, field) => {
    const response = await put(rawBody);
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
    await expectFlowUnchanged();
  });

  it.each([
    ['JSON null', 'null'],
    ['an empty body', ''],
  ])('refuses %s with 422 invalid_request: the edit needs a body', async (_what, rawBody) => {
    const response = await put(rawBody);
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.message).toContain('needs a JSON object body');
    await expectFlowUnchanged();
  });

  it('refuses a body nested 65 levels deep with 422 invalid_request, as every other route does', async () => {
    const json = (await server.request('GET', `/v1/flows/${flowId}/json`, { apiKey: account.apiKey })).body;
    const rawBody = JSON.stringify(json).replace(/}$/, `,"deep":${'['.repeat(64)}${']'.repeat(64)}}`);
    const response = await put(rawBody);
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.message).toContain('nested more than 64 levels');
    await expectFlowUnchanged();
  });
});

describe('GET /v1/flows/{id}/json', () => {
  it('answers the document as JSON, and the same object sent back changes nothing', async () => {
    const got = await server.request('GET', `/v1/flows/${flowId}/json`, { apiKey: account.apiKey });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toMatch(/^application\/json/);
    expect(got.body).toMatchObject({ id: 'guessing-game', initial_state: expect.any(String), states: expect.any(Object) });
    const back = await server.request('PUT', `/v1/flows/${flowId}/json`, { apiKey: account.apiKey, body: got.body });
    expect(back.status, back.text.slice(0, 300)).toBe(200);
    expect(back.body.yaml_content).toBe(GUESSING_GAME_YAML);
  });

  it('answers another account’s flow with 404, before any work', async () => {
    const other = await createAccount(server);
    expectError(await server.request('GET', `/v1/flows/${flowId}/json`, { apiKey: other.apiKey }), 404, 'flow_not_found');
    expectError(await server.request('PUT', `/v1/flows/${flowId}/json`, { apiKey: other.apiKey, rawBody: '{}', headers: JSON_TYPE }), 404, 'flow_not_found');
  });
});
