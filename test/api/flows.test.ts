import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
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

const MINIMAL_FLOW = `# A one-state flow.
id: minimal
version: "1.0.0"
initial_state: only
states:
  only:
    agent:
      prompt: Say hello.   # the whole flow
`;

const SETUP_UI_PROMPT = 'Ten questions: the host thinks of something, you have ten yes-or-no questions to guess it.';

describe('creating a flow', () => {
  it('returns 201 with id, name, yaml_content exactly as sent, created_at and diagnostics', async () => {
    const before = Date.now() / 1000;
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Game', yaml_content: GUESSING_GAME_YAML } });
    expect(response.status).toBe(201);
    expect(response.body.id).toBeTypeOf('string');
    expect(response.body.name).toBe('Game');
    expect(response.body.yaml_content).toBe(GUESSING_GAME_YAML);
    expect(response.body.created_at).toBeTypeOf('number');
    expect(response.body.created_at).toBeGreaterThanOrEqual(before - 5);
    expect(response.body.created_at).toBeLessThanOrEqual(Date.now() / 1000 + 5);
    expect(Array.isArray(response.body.diagnostics)).toBe(true);
    for (const d of response.body.diagnostics) expect(d.severity).toBe('warning');
  });

  it('accepts a flow with warnings and lists them in diagnostics', async () => {
    // An unreachable second state is a warning, not an error.
    const withWarning = `${MINIMAL_FLOW}  orphan:\n    agent:\n      prompt: Nobody comes here.\n`;
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Warn', yaml_content: withWarning } });
    expect(response.status).toBe(201);
    expect(response.body.diagnostics.length).toBeGreaterThan(0);
    expect(response.body.diagnostics.every((d: { severity: string }) => d.severity === 'warning')).toBe(true);
    expect(response.body.diagnostics.map((d: { code: string }) => d.code)).toContain('unreachable_state');
  });

  it('refuses invalid YAML with 422 invalid_flow and details that give code, line and column', async () => {
    const broken = 'id: x\nversion: "1"\ninitial_state: a\nstates:\n  a:\n    agent: [unclosed\n';
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Broken', yaml_content: broken } });
    expectError(response, 422, 'invalid_flow');
    expect(response.body.error.details.length).toBeGreaterThan(0);
    for (const d of response.body.error.details) {
      expect(d.code).toBeTypeOf('string');
      expect(Number.isInteger(d.line) && d.line >= 1).toBe(true);
      expect(Number.isInteger(d.column) && d.column >= 1).toBe(true);
    }
    expect(response.body.error.details[0]).toMatchObject({ severity: 'error', code: 'yaml_syntax' });
  });

  it('refuses a flow whose initial_state is not a state, pointing at that line', async () => {
    const wrong = MINIMAL_FLOW.replace('initial_state: only', 'initial_state: nowhere');
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Wrong', yaml_content: wrong } });
    expectError(response, 422, 'invalid_flow');
    expect(response.body.error.details[0]).toMatchObject({ code: 'unknown_initial_state', line: 4 });
  });

  it('does not store a refused flow', async () => {
    const before = await server.request('GET', '/v1/flows', { apiKey: account.apiKey });
    await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Never stored', yaml_content: 'states: [' } });
    const after = await server.request('GET', '/v1/flows', { apiKey: account.apiKey });
    expect(after.body).toEqual(before.body);
  });

  it('accepts a JWT as well as an API key', async () => {
    const created = await server.request('POST', '/v1/flows', { jwt: account.jwt, body: { name: 'By JWT', yaml_content: MINIMAL_FLOW } });
    expect(created.status).toBe(201);
    const read = await server.request('GET', `/v1/flows/${created.body.id}`, { jwt: account.jwt });
    expect(read.status).toBe(200);
    expect(read.body.yaml_content).toBe(MINIMAL_FLOW);
    const viaKey = await server.request('GET', `/v1/flows/${created.body.id}`, { apiKey: account.apiKey });
    expect(viaKey.body.name).toBe('By JWT');
  });
});

describe('reading flows', () => {
  it('lists the account\'s flows as {id, name, created_at, updated_at} only, without yaml_content', async () => {
    const id = await createFlow(server, account.apiKey, 'Listed');
    const list = await server.request('GET', '/v1/flows', { apiKey: account.apiKey });
    expect(list.status).toBe(200);
    const item = list.body.find((f: { id: string }) => f.id === id);
    expect(item).toBeDefined();
    expect(Object.keys(item).sort()).toEqual(['created_at', 'id', 'name', 'updated_at']);
    expect(item.name).toBe('Listed');
    expect(list.text).not.toContain('yaml_content');
  });

  it('returns one flow with yaml_content byte for byte as uploaded, comments included', async () => {
    const id = await createFlow(server, account.apiKey, 'Comments', MINIMAL_FLOW);
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, name: 'Comments', yaml_content: MINIMAL_FLOW });
    expect(read.body.yaml_content).toContain('# the whole flow');
    expect(read.body.created_at).toBeTypeOf('number');
  });

  it('answers 404 flow_not_found for an unknown id', async () => {
    expectError(await server.request('GET', '/v1/flows/no-such-flow', { apiKey: account.apiKey }), 404, 'flow_not_found');
  });

  it('returns the document as JSON on GET /json', async () => {
    const id = await createFlow(server, account.apiKey);
    const json = await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey });
    expect(json.status).toBe(200);
    expect(json.body.id).toBe('guessing-game');
    expect(json.body.version).toBe('1.0.0');
    expect(json.body.initial_state).toBe('setup');
    expect(Object.keys(json.body.states)).toEqual(['setup', 'playing', 'won', 'lost']);
    expect(json.body.states.setup.agent.tools).toEqual(['begin_game']);
    expect(json.body.states.setup.ui.prompt).toBe(SETUP_UI_PROMPT);
    expect(json.body.states.playing.transitions.on_tool_call).toEqual({ guess_correct: 'won', out_of_questions: 'lost' });
  });
});

describe('changing a flow', () => {
  it('renames a flow with PUT {name} and keeps its YAML', async () => {
    const id = await createFlow(server, account.apiKey, 'Old name', MINIMAL_FLOW);
    const put = await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: { name: 'New name' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, name: 'New name', yaml_content: MINIMAL_FLOW });
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.body).toMatchObject({ name: 'New name', yaml_content: MINIMAL_FLOW });
    const list = await server.request('GET', '/v1/flows', { apiKey: account.apiKey });
    expect(list.body.find((f: { id: string }) => f.id === id).name).toBe('New name');
  });

  it('replaces the YAML with PUT {yaml_content} and keeps the name', async () => {
    const id = await createFlow(server, account.apiKey, 'Keeps name', MINIMAL_FLOW);
    const changed = MINIMAL_FLOW.replace('Say hello.', 'Say goodbye.');
    const put = await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: { yaml_content: changed } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, name: 'Keeps name', yaml_content: changed });
    expect((await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.yaml_content).toBe(changed);
  });

  it('changes name and YAML together with one PUT', async () => {
    const id = await createFlow(server, account.apiKey, 'Both', MINIMAL_FLOW);
    const put = await server.request('PUT', `/v1/flows/${id}`, { jwt: account.jwt, body: { name: 'Both changed', yaml_content: GUESSING_GAME_YAML } });
    expect(put.status).toBe(200);
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.body).toMatchObject({ name: 'Both changed', yaml_content: GUESSING_GAME_YAML });
  });

  it('refuses PUT with invalid YAML with 422 and keeps the stored flow', async () => {
    const id = await createFlow(server, account.apiKey, 'Guarded', MINIMAL_FLOW);
    const put = await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: { name: 'Renamed too', yaml_content: 'id: [' } });
    expectError(put, 422, 'invalid_flow');
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.body).toMatchObject({ name: 'Guarded', yaml_content: MINIMAL_FLOW });
  });

  it('refuses PUT with neither name nor yaml_content with 422 invalid_request', async () => {
    const id = await createFlow(server, account.apiKey, 'Empty put', MINIMAL_FLOW);
    expectError(await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: {} }), 422, 'invalid_request');
  });

  it('keeps the studio layout beside the YAML: PUT {layout} stores positions, the YAML stays byte for byte, null clears it', async () => {
    const id = await createFlow(server, account.apiKey, 'Laid out', MINIMAL_FLOW);
    expect((await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.layout).toBeNull();
    const layout = { positions: { start: { x: 10, y: -20.5 }, gone: { x: 0, y: 0 } } };
    const put = await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: { layout } });
    expect(put.status).toBe(200);
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.body.layout).toEqual(layout);
    expect(read.body.yaml_content).toBe(MINIMAL_FLOW);
    // Saving YAML alone leaves the layout as it was.
    await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: { yaml_content: MINIMAL_FLOW + '# edited\n' } });
    expect((await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.layout).toEqual(layout);
    await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: { layout: null } });
    expect((await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.layout).toBeNull();
  });

  it('refuses a layout that is not positions of finite numbers with 422, naming the field', async () => {
    const id = await createFlow(server, account.apiKey, 'Bad layout', MINIMAL_FLOW);
    for (const layout of [{ positions: { a: { x: 'left', y: 0 } } }, { positions: { a: { x: 1 } } }, { where: {} }, [1, 2]]) {
      const put = await server.request('PUT', `/v1/flows/${id}`, { apiKey: account.apiKey, body: { layout } });
      expectError(put, 422, 'invalid_request');
      expect(JSON.stringify(put.body.error.details)).toContain('layout');
    }
    expect((await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.layout).toBeNull();
  });

  it('answers PUT on an unknown flow with 404 flow_not_found', async () => {
    expectError(await server.request('PUT', '/v1/flows/no-such-flow', { apiKey: account.apiKey, body: { name: 'x' } }), 404, 'flow_not_found');
  });

  it('applies a changed prompt from PUT /json onto the YAML, keeping every comment and changing only that prompt', async () => {
    const id = await createFlow(server, account.apiKey, 'Edited visually');
    const json = (await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey })).body;
    json.states.setup.ui.prompt = 'Twenty questions, actually.';
    const put = await server.request('PUT', `/v1/flows/${id}/json`, { apiKey: account.apiKey, body: json });
    expect(put.status).toBe(200);

    const stored: string = (await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.yaml_content;
    expect(put.body.yaml_content).toBe(stored);
    const commentLines = GUESSING_GAME_YAML.split('\n').filter((line) => line.trim().startsWith('#'));
    expect(commentLines.length).toBeGreaterThan(3);
    for (const line of commentLines) expect(stored.split('\n')).toContain(line);
    expect(stored).toBe(GUESSING_GAME_YAML.replace(`prompt: "${SETUP_UI_PROMPT}"`, 'prompt: "Twenty questions, actually."'));

    const again = await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey });
    expect(again.body).toEqual(json);
  });

  it('returns the stored YAML unchanged when PUT /json sends the document back as it is', async () => {
    const id = await createFlow(server, account.apiKey);
    const json = (await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey })).body;
    const put = await server.request('PUT', `/v1/flows/${id}/json`, { apiKey: account.apiKey, body: json });
    expect(put.status).toBe(200);
    expect(put.body.yaml_content).toBe(GUESSING_GAME_YAML);
  });

  it('refuses PUT /json that breaks the flow with 422 and leaves the stored flow unchanged', async () => {
    const id = await createFlow(server, account.apiKey);
    const json = (await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey })).body;
    json.initial_state = 'nowhere';
    const put = await server.request('PUT', `/v1/flows/${id}/json`, { apiKey: account.apiKey, body: json });
    expectError(put, 422, 'invalid_flow');
    expect(put.body.error.details.map((d: { code: string }) => d.code)).toContain('unknown_initial_state');
    const read = await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(read.body.yaml_content).toBe(GUESSING_GAME_YAML);
  });

  it('refuses PUT /json whose body is not a JSON object with 422 invalid_request', async () => {
    const id = await createFlow(server, account.apiKey);
    for (const body of [[1, 2], 'text', 42]) {
      expectError(await server.request('PUT', `/v1/flows/${id}/json`, { apiKey: account.apiKey, body }), 422, 'invalid_request');
    }
    expect((await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey })).body.yaml_content).toBe(GUESSING_GAME_YAML);
  });
});

describe('deleting a flow', () => {
  it('answers 204, after which the flow is 404 and gone from the list', async () => {
    const id = await createFlow(server, account.apiKey, 'Doomed');
    const deleted = await server.request('DELETE', `/v1/flows/${id}`, { apiKey: account.apiKey });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectError(await server.request('GET', `/v1/flows/${id}`, { apiKey: account.apiKey }), 404, 'flow_not_found');
    expectError(await server.request('GET', `/v1/flows/${id}/json`, { apiKey: account.apiKey }), 404, 'flow_not_found');
    const list = await server.request('GET', '/v1/flows', { apiKey: account.apiKey });
    expect(list.body.map((f: { id: string }) => f.id)).not.toContain(id);
  });

  it('answers a second delete of the same flow with 404', async () => {
    const id = await createFlow(server, account.apiKey, 'Twice');
    expect((await server.request('DELETE', `/v1/flows/${id}`, { jwt: account.jwt })).status).toBe(204);
    expectError(await server.request('DELETE', `/v1/flows/${id}`, { jwt: account.jwt }), 404, 'flow_not_found');
  });
});

describe('credentials on the flow endpoints', () => {
  it.each([
    ['GET', '/v1/flows'],
    ['POST', '/v1/flows'],
    ['GET', '/v1/flows/any'],
    ['PUT', '/v1/flows/any'],
    ['DELETE', '/v1/flows/any'],
    ['GET', '/v1/flows/any/json'],
    ['PUT', '/v1/flows/any/json'],
  ])('%s %s without a credential is 401 missing_credentials', async (method, path) => {
    const body = method === 'POST' || method === 'PUT' ? { name: 'x', yaml_content: MINIMAL_FLOW } : undefined;
    expectError(await server.request(method, path, { body }), 401, 'missing_credentials');
  });
});
