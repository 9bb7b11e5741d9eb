import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let a: Awaited<ReturnType<typeof createAccount>>;
let b: Awaited<ReturnType<typeof createAccount>>;
let flowOfA: string;
let flowOfB: string;
let sessionPrefixOfA: string;

beforeAll(async () => {
  server = await startTestServer();
  [a, b] = await Promise.all([createAccount(server), createAccount(server)]);
  [flowOfA, flowOfB] = await Promise.all([createFlow(server, a.apiKey, 'A\'s flow'), createFlow(server, b.apiKey, 'B\'s flow')]);
  const [sessionOfA, sessionOfB] = await Promise.all([
    server.request('POST', '/v1/sessions', { apiKey: a.apiKey, body: { flow_id: flowOfA } }),
    server.request('POST', '/v1/sessions', { apiKey: b.apiKey, body: { flow_id: flowOfB } }),
  ]);
  expect([sessionOfA.status, sessionOfB.status]).toEqual([200, 200]);
  sessionPrefixOfA = sessionOfA.body.session_token.slice(0, 12);
});
afterAll(async () => {
  await server.close();
});

async function expectFlowOfAUnchanged() {
  const read = await server.request('GET', `/v1/flows/${flowOfA}`, { apiKey: a.apiKey });
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ id: flowOfA, name: 'A\'s flow', yaml_content: GUESSING_GAME_YAML });
}

const changedJson = () => ({ id: 'hijacked', version: '1.0.0', initial_state: 'x', states: { x: { agent: { prompt: 'Mine now.' } } } });

describe.each([
  ['an API key', () => ({ apiKey: b.apiKey })],
  ['a JWT', () => ({ jwt: b.jwt })],
])('account B with %s', (_kind, credentialOfB) => {
  it('does not see A\'s flow in its list', async () => {
    const list = await server.request('GET', '/v1/flows', credentialOfB());
    expect(list.status).toBe(200);
    expect(list.body.map((f: { id: string }) => f.id)).toEqual([flowOfB]);
  });

  it('gets 404 flow_not_found for A\'s flow, as if it did not exist', async () => {
    const response = await server.request('GET', `/v1/flows/${flowOfA}`, credentialOfB());
    const unknown = await server.request('GET', '/v1/flows/no-such-flow', credentialOfB());
    expectError(response, 404, 'flow_not_found');
    expect(response.text).not.toContain('guessing-game');
    expect(response.body.error.message.replace(flowOfA, 'ID')).toBe(unknown.body.error.message.replace('no-such-flow', 'ID'));
  });

  it('gets 404 for the JSON of A\'s flow', async () => {
    expectError(await server.request('GET', `/v1/flows/${flowOfA}/json`, credentialOfB()), 404, 'flow_not_found');
  });

  it('cannot change A\'s flow with PUT (404) and the flow stays as it was', async () => {
    const response = await server.request('PUT', `/v1/flows/${flowOfA}`, { ...credentialOfB(), body: { name: 'Hijacked', yaml_content: GUESSING_GAME_YAML.replace('setup', 'x') } });
    expectError(response, 404, 'flow_not_found');
    await expectFlowOfAUnchanged();
  });

  it('cannot change A\'s flow with an invalid PUT either: 404, not 422', async () => {
    const response = await server.request('PUT', `/v1/flows/${flowOfA}`, { ...credentialOfB(), body: { yaml_content: 'not: [valid' } });
    expectError(response, 404, 'flow_not_found');
  });

  it('cannot change A\'s flow with PUT /json (404) and the flow stays as it was', async () => {
    const response = await server.request('PUT', `/v1/flows/${flowOfA}/json`, { ...credentialOfB(), body: changedJson() });
    expectError(response, 404, 'flow_not_found');
    await expectFlowOfAUnchanged();
  });

  it('cannot delete A\'s flow (404) and the flow is still there', async () => {
    expectError(await server.request('DELETE', `/v1/flows/${flowOfA}`, credentialOfB()), 404, 'flow_not_found');
    await expectFlowOfAUnchanged();
    const listOfA = await server.request('GET', '/v1/flows', { apiKey: a.apiKey });
    expect(listOfA.body.map((f: { id: string }) => f.id)).toContain(flowOfA);
  });

  it('does not see A\'s sessions', async () => {
    const list = await server.request('GET', '/v1/sessions', credentialOfB());
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThan(0);
    expect(list.body.every((s: { flow_id: string | null }) => s.flow_id !== flowOfA)).toBe(true);
    expect(list.body.map((s: { token_prefix: string }) => s.token_prefix)).not.toContain(sessionPrefixOfA);
  });

  it('sees its own balance, not A\'s', async () => {
    const balance = await server.request('GET', '/v1/credits/balance', credentialOfB());
    expect(balance.body.balance_usd_cents).toBe(200);
  });
});

describe('account B and A\'s other resources', () => {
  it('cannot start a session on A\'s flow: 404 flow_not_found', async () => {
    const response = await server.request('POST', '/v1/sessions', { apiKey: b.apiKey, body: { flow_id: flowOfA } });
    expectError(response, 404, 'flow_not_found');
  });

  it('cannot revoke A\'s API key (404) and the key keeps working', async () => {
    const response = await server.request('DELETE', `/auth/api-keys/${a.apiKeyId}`, { jwt: b.jwt });
    expectError(response, 404, 'api_key_not_found');
    expect((await server.request('GET', '/v1/flows', { apiKey: a.apiKey })).status).toBe(200);
    const keysOfA = await server.request('GET', '/auth/api-keys', { jwt: a.jwt });
    expect(keysOfA.body.map((k: { id: string }) => k.id)).toContain(a.apiKeyId);
  });

  it('does not see A\'s API keys in its list', async () => {
    const keysOfB = await server.request('GET', '/auth/api-keys', { jwt: b.jwt });
    expect(keysOfB.status).toBe(200);
    expect(keysOfB.body.map((k: { id: string }) => k.id)).toEqual([b.apiKeyId]);
  });

  it('does not see A\'s provider keys, nor change them', async () => {
    const set = await server.request('PATCH', '/v1/providers', { jwt: a.jwt, body: { llm_api_key: 'sk-of-account-A-1234' } });
    expect(set.status).toBe(200);
    const ofB = await server.request('GET', '/v1/providers', { jwt: b.jwt });
    expect(ofB.body.llm_api_key).toBeNull();
    await server.request('PATCH', '/v1/providers', { jwt: b.jwt, body: { llm_api_key: null } });
    expect((await server.request('GET', '/v1/providers', { jwt: a.jwt })).body.llm_api_key).toBe('sk-…1234');
  });
});

describe('account A\'s lists', () => {
  it('never contain B\'s flows, sessions or keys', async () => {
    const flows = await server.request('GET', '/v1/flows', { jwt: a.jwt });
    expect(flows.body.map((f: { id: string }) => f.id)).toEqual([flowOfA]);
    const sessions = await server.request('GET', '/v1/sessions', { jwt: a.jwt });
    expect(sessions.body.map((s: { flow_id: string }) => s.flow_id)).toEqual([flowOfA]);
    const keys = await server.request('GET', '/auth/api-keys', { jwt: a.jwt });
    expect(keys.body.map((k: { id: string }) => k.id)).toEqual([a.apiKeyId]);
  });
});
