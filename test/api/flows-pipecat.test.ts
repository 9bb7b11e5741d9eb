import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

// Pipecat Flows interop over HTTP: POST /v1/flows/import/pipecat converts (and does not create),
// GET /v1/flows/{id}/export/pipecat exports the published version.
const fixture = (name: string) => readFileSync(new URL(`../flow/pipecat/${name}`, import.meta.url), 'utf8');
const JSON_TYPE = { 'content-type': 'application/json' };
const validateFlowConfig = new Ajv2020({ strict: true }).compile(JSON.parse(fixture('flow_config.schema.json')));

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
});
afterAll(async () => {
  await server?.close();
});

const importBody = (rawBody: string) => server.request('POST', '/v1/flows/import/pipecat', { apiKey: account.apiKey, rawBody, headers: JSON_TYPE });

describe('POST /v1/flows/import/pipecat', () => {
  it('answers a FlowConfig sent as the body as a Voxflow flow that the flows API then accepts, with diagnostics at the lines of the body', async () => {
    const text = fixture('food-ordering.flowconfig.json');
    const response = await importBody(text);
    expect(response.status).toBe(200);
    expect(parseYaml(response.body.yaml_content).initial_state).toBe('start');
    const minimum = response.body.diagnostics.find((d: { message: string }) => d.message.startsWith('`minimum`'));
    expect(minimum).toMatchObject({ severity: 'warning', code: 'pipecat_unmapped_key', line: text.split('\n').findIndex((l) => l.includes('"minimum"')) + 1 });

    const created = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Food', yaml_content: response.body.yaml_content } });
    expect(created.status).toBe(201);
    expect(created.body.diagnostics.filter((d: { severity: string }) => d.severity === 'error')).toEqual([]);
  });

  it('takes a YAML file wrapped as {"text": ...}', async () => {
    const response = await server.request('POST', '/v1/flows/import/pipecat', { jwt: account.jwt, body: { text: fixture('patient-intake.flowconfig.yaml') } });
    expect(response.status).toBe(200);
    expect(parseYaml(response.body.yaml_content).states.get_prescriptions.context).toBe('reset');
    expect(response.body.diagnostics.map((d: { code: string }) => d.code)).toContain('pipecat_parameter_adapted');
  });

  it('tells the YAML FlowConfig of Pipecat Flows 1.x from the format before 1.0, and says which it read', async () => {
    const text = fixture('pizza-order.flowconfig.yaml');
    const response = await server.request('POST', '/v1/flows/import/pipecat', { apiKey: account.apiKey, body: { text } });
    expect(response.status).toBe(200);
    expect(response.body.format).toBe('declarative');
    expect(parseYaml(response.body.yaml_content).states.pizza.transitions).toEqual({ on_tool_result: { place_order: ['confirm', 'pizza'] }, on_tool_call: { place_order: 'confirm' } });
    const unschemed = response.body.diagnostics.find((d: { code: string }) => d.code === 'pipecat_function_without_schema');
    expect(unschemed).toMatchObject({ severity: 'warning', line: text.split('\n').findIndex((l) => l.includes('name: choose_pizza')) + 1 });
    const old = await importBody(fixture('food-ordering.flowconfig.json'));
    expect(old.body.format).toBe('static');
  });

  it('does not create a flow', async () => {
    const before = (await server.request('GET', '/v1/flows', { apiKey: account.apiKey })).body.length;
    await importBody(fixture('gemini-declarations.flowconfig.json'));
    expect((await server.request('GET', '/v1/flows', { apiKey: account.apiKey })).body.length).toBe(before);
  });

  it('refuses what is not a FlowConfig with 422 invalid_pipecat_flow saying why', async () => {
    const voxflow = await server.request('POST', '/v1/flows/import/pipecat', { apiKey: account.apiKey, body: { text: GUESSING_GAME_YAML } });
    expectError(voxflow, 422, 'invalid_pipecat_flow');
    expect(voxflow.body.error.message).toContain('Voxflow flow');
    expect(voxflow.body.error.details[0]).toMatchObject({ code: 'pipecat_not_a_flow_config', severity: 'error' });
    expectError(await importBody('[1, 2]'), 422, 'invalid_pipecat_flow');
  });

  it('refuses a body that is not JSON, or none, as every JSON route does', async () => {
    expectError(await importBody('{"initial_node": '), 400, 'malformed_json');
    expectError(await importBody(''), 422, 'invalid_request');
    expectError(await server.request('POST', '/v1/flows/import/pipecat', { body: { text: 'x' } }), 401, 'missing_credentials');
  });
});

describe('GET /v1/flows/{id}/export/pipecat', () => {
  it('answers the published flow as a FlowConfig, with what did not carry over', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const response = await server.request('GET', `/v1/flows/${flowId}/export/pipecat`, { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    const { flow_config: config, diagnostics } = response.body;
    expect(config.initial_node).toBe('setup');
    expect(Object.keys(config.nodes)).toEqual(['setup', 'playing', 'won', 'lost']);
    expect(config.nodes.setup.functions[0].function).toMatchObject({ name: 'begin_game', transition_to: 'playing' });
    expect(diagnostics.map((d: { code: string; path: string[] }) => `${d.code} ${d.path.join('.')}`)).toContain('pipecat_no_equivalent states.setup.tools.begin_game.speech_cue');
  });

  it('answers YAML with ?format=yaml, headed by what did not carry over', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const response = await server.request('GET', `/v1/flows/${flowId}/export/pipecat?format=yaml`, { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(response.text).toMatch(/^# Exported from Voxflow\. Not carried over:\n# pipecat_no_equivalent at states\.setup\.tools\.begin_game\.speech_cue: /);
    expect(response.text).toContain('\n# pipecat_no_equivalent at states.setup.ui: ');
    expect(parseYaml(response.text).nodes.won.functions[0].function.transition_to).toBe('setup');
  });

  it('answers the YAML FlowConfig of Pipecat Flows 1.x with ?format=declarative: valid against its schema, and imported back to the same flow', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const response = await server.request('GET', `/v1/flows/${flowId}/export/pipecat?format=declarative`, { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(response.text).toMatch(/^# Exported from Voxflow\. Not carried over:\n# pipecat_no_equivalent at states\.setup\.tools\.begin_game\.speech_cue: /);
    expect(response.text).toContain('\n# voxflow:\n#   functions:\n#     begin_game:\n');
    const config = parseYaml(response.text);
    expect(validateFlowConfig(config), JSON.stringify(validateFlowConfig.errors)).toBe(true);
    expect(config.nodes.setup.functions).toEqual([{ name: 'begin_game', transition_to: 'playing' }]);

    const back = await server.request('POST', '/v1/flows/import/pipecat', { apiKey: account.apiKey, body: { text: response.text } });
    expect(back.body.format).toBe('declarative');
    const original = parseYaml(GUESSING_GAME_YAML);
    const imported = parseYaml(back.body.yaml_content);
    expect(imported.states.setup.tools.begin_game).toEqual(original.states.setup.tools.begin_game);
    expect(imported.states.playing.transitions).toEqual(original.states.playing.transitions);
    expect(back.body.diagnostics.map((d: { code: string }) => d.code)).not.toContain('pipecat_function_without_schema');
  });

  it('answers the same as JSON with ?format=declarative_json, the definitions beside the FlowConfig', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const response = await server.request('GET', `/v1/flows/${flowId}/export/pipecat?format=declarative_json`, { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(validateFlowConfig(response.body.flow_config)).toBe(true);
    expect(response.body.functions.begin_game.parameters.secret_thing).toEqual({ type: 'string', required: true });
    expect(response.body.node_functions).toEqual({});
    expect(response.body.diagnostics.map((d: { code: string; path: string[] }) => `${d.code} ${d.path.join('.')}`)).toContain('pipecat_no_equivalent states.setup.ui');
  });

  it("refuses an unknown format, and another account's flow is a 404", async () => {
    const flowId = await createFlow(server, account.apiKey);
    expectError(await server.request('GET', `/v1/flows/${flowId}/export/pipecat?format=xml`, { apiKey: account.apiKey }), 422, 'invalid_request');
    const other = await createAccount(server);
    expectError(await server.request('GET', `/v1/flows/${flowId}/export/pipecat`, { apiKey: other.apiKey }), 404, 'flow_not_found');
  });
});

describe('a FlowConfig that takes long to convert', () => {
  it('is converted in a flow worker, within its CPU budget: past it, 422 flow_too_complex, and the next import is served', { timeout: 60_000 }, async () => {
    const budgeted = await startTestServer({ limits: { flowJobBudgetMs: 60, flowWorkers: 1 } });
    try {
      const { apiKey } = await createAccount(budgeted);
      const send = (rawBody: string) => budgeted.request('POST', '/v1/flows/import/pipecat', { apiKey, rawBody, headers: JSON_TYPE });
      // A first import starts the worker, so the budget below is spent on the big file alone.
      expect((await send(fixture('gemini-declarations.flowconfig.json'))).status).toBe(200);
      const nodes: Record<string, unknown> = {};
      for (let i = 0; i < 1500; i++) {
        nodes[`n${i}`] = { task_messages: [{ role: 'system', content: `Step ${i}.` }], functions: [{ name: 'next', description: 'Go on', properties: { a: { type: 'string' } }, transition_to: `n${(i + 1) % 1500}` }] };
      }
      const refused = await send(JSON.stringify({ initial_node: 'n0', nodes }));
      expectError(refused, 422, 'flow_too_complex');
      expect((await send(fixture('gemini-declarations.flowconfig.json'))).status).toBe(200);
    } finally {
      await budgeted.close();
    }
  });
});
