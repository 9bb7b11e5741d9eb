import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
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

const NUL = '\u0000';

interface Case {
  what: string;
  method: string;
  path: () => string;
  body?: () => unknown;
  credential: 'none' | 'jwt' | 'apiKey';
  field: string;
}

const CASES: Case[] = [
  { what: 'login without credentials, in the email', method: 'POST', path: () => '/auth/login', body: () => ({ email: `a${NUL}@example.com`, password: 'x' }), credential: 'none', field: 'email' },
  { what: 'login, in the password', method: 'POST', path: () => '/auth/login', body: () => ({ email: account.email, password: `pass${NUL}word` }), credential: 'none', field: 'password' },
  { what: 'signup, in the email', method: 'POST', path: () => '/auth/signup', body: () => ({ email: `new${NUL}@example.com`, password: 'correct horse battery staple' }), credential: 'none', field: 'email' },
  { what: 'a new flow, in its name', method: 'POST', path: () => '/v1/flows', body: () => ({ name: `game${NUL}`, yaml_content: GUESSING_GAME_YAML }), credential: 'apiKey', field: 'name' },
  { what: 'a new flow, in its YAML', method: 'POST', path: () => '/v1/flows', body: () => ({ name: 'game', yaml_content: `${GUESSING_GAME_YAML}\n# ${NUL}\n` }), credential: 'apiKey', field: 'yaml_content' },
  { what: 'a flow update, in its name', method: 'PUT', path: () => `/v1/flows/${flowId}`, body: () => ({ name: `renamed${NUL}` }), credential: 'apiKey', field: 'name' },
  { what: 'a flow update, in a state name of its layout', method: 'PUT', path: () => `/v1/flows/${flowId}`, body: () => ({ layout: { positions: { [`s${NUL}`]: { x: 1, y: 2 } } } }), credential: 'apiKey', field: 'layout.positions' },
  { what: 'a flow as JSON (parsed in a worker), in a field', method: 'PUT', path: () => `/v1/flows/${flowId}/json`, body: () => ({ id: `game${NUL}`, initial_state: 'setup', states: {} }), credential: 'apiKey', field: 'id' },
  { what: 'a Pipecat import (parsed in a worker), in a node', method: 'POST', path: () => '/v1/flows/import/pipecat', body: () => ({ initial_node: 'start', nodes: { start: { task_messages: [{ role: 'system', content: `Hi${NUL}` }] } } }), credential: 'apiKey', field: 'nodes.start.task_messages.0.content' },
  { what: 'a draft, in its YAML', method: 'PUT', path: () => `/v1/flows/${flowId}/draft`, body: () => ({ yaml_content: `${GUESSING_GAME_YAML}\n# ${NUL}\n` }), credential: 'apiKey', field: 'yaml_content' },
  { what: 'a flow test, in its YAML', method: 'POST', path: () => `/v1/flows/${flowId}/tests`, body: () => ({ yaml_content: `name: t${NUL}\nsteps: []\n` }), credential: 'apiKey', field: 'yaml_content' },
  { what: 'a session, in a context value', method: 'POST', path: () => '/v1/sessions', body: () => ({ flow_id: flowId, context: { caller: `Ann${NUL}` } }), credential: 'apiKey', field: 'context.caller' },
  { what: 'a session, in a context key', method: 'POST', path: () => '/v1/sessions', body: () => ({ flow_id: flowId, context: { [`caller${NUL}`]: 'Ann' } }), credential: 'apiKey', field: 'context' },
  { what: 'a webhook, in its URL', method: 'POST', path: () => '/v1/webhooks', body: () => ({ url: `https://example.com/hook${NUL}` }), credential: 'jwt', field: 'url' },
  { what: 'a secret, in its value', method: 'PUT', path: () => '/v1/secrets/CRM_KEY', body: () => ({ value: `abc${NUL}` }), credential: 'jwt', field: 'value' },
  { what: 'a phone number, in its label', method: 'POST', path: () => '/v1/phone-numbers', body: () => ({ carrier: 'twilio', number: '+15551230001', flow_id: flowId, label: `front desk${NUL}` }), credential: 'jwt', field: 'label' },
  { what: 'a flow path, %00 in its id', method: 'GET', path: () => `/v1/flows/${flowId}%00`, credential: 'apiKey', field: 'flow_id' },
  { what: 'a session path, %00 in its id', method: 'GET', path: () => '/v1/sessions/abc%00def', credential: 'apiKey', field: 'session_id' },
  { what: 'a secret path, %00 in its name', method: 'DELETE', path: () => '/v1/secrets/A%00B', credential: 'jwt', field: 'name' },
  { what: 'a phone-number path, %00 in its id', method: 'GET', path: () => '/v1/phone-numbers/pn%00', credential: 'apiKey', field: 'id' },
  { what: 'a webhook path, %00 in its id', method: 'DELETE', path: () => '/v1/webhooks/wh%00', credential: 'jwt', field: 'webhook_id' },
  { what: 'a query, %00 in an API key label', method: 'POST', path: () => '/auth/api-keys?label=ci%00', credential: 'jwt', field: 'label' },
];

describe('a NUL character anywhere in a request is refused, naming where it is', () => {
  it.each(CASES)('$what: 422 naming $field', async (c) => {
    const credential = c.credential === 'jwt' ? { jwt: account.jwt } : c.credential === 'apiKey' ? { apiKey: account.apiKey } : {};
    const response = await server.request(c.method, c.path(), { ...credential, ...(c.body ? { body: c.body() } : {}) });
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field: c.field }));
    expect(response.body.error.message).toMatch(/NUL/);
  });

  it('changes nothing: the flow refused an update keeps its name and document', async () => {
    const before = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    expect(before.status).toBe(200);
    for (const body of [{ name: `renamed${NUL}` }, { yaml_content: `${GUESSING_GAME_YAML}# ${NUL}\n` }]) {
      expectError(await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body }), 422, 'invalid_request');
    }
    const after = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    expect({ name: after.body.name, yaml: after.body.yaml_content }).toEqual({ name: before.body.name, yaml: before.body.yaml_content });
  });

  it('takes the text "\\u0000" (a backslash, then u0000), which is no NUL', async () => {
    const name = 'escaped \\u0000 is text';
    const renamed = await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { name } });
    expect({ status: renamed.status, name: renamed.body.name }).toEqual({ status: 200, name });
    const asJson = await server.request('GET', `/v1/flows/${flowId}/json`, { apiKey: account.apiKey });
    const edited = await server.request('PUT', `/v1/flows/${flowId}/json`, { apiKey: account.apiKey, body: { ...asJson.body, settings: { ...asJson.body.settings, base_system_prompt: name } } });
    expect(edited.status, edited.text.slice(0, 300)).toBe(200);
  });
});
