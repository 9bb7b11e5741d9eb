// Flow tests over the hosted API (docs/testing.md#flow-tests): stored with their flow, refused with
// line and column when they do not validate, imported and exported as suite files, and run as jobs
// whose results say, per step, expected against actual, with the flow's coverage.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { GAME_YAML, SUITE_YAML } from '../support/guessing-game-tests.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
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

const START_TEST = `# How every game begins.
name: the game starts
steps:
  - user: "I'm ready"
    expect:
      tool_called: {name: begin_game, arguments: {secret_thing: a cat, questions_asked: "0"}}
      state: playing   # the card changes too
`;

async function waitForRun(flowId: string, runId: string) {
  let run: any;
  await vi.waitFor(
    async () => {
      run = (await server.request('GET', `/v1/flows/${flowId}/tests/runs/${runId}`, { apiKey: account.apiKey })).body;
      expect(run.status).not.toBe('running');
    },
    { timeout: 15_000, interval: 50 },
  );
  return run;
}

describe('storing tests with a flow', () => {
  it('creates, lists, reads, replaces and deletes a test, its YAML kept as written', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const created = await server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: account.apiKey, body: { yaml_content: START_TEST } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ flow_id: flowId, name: 'the game starts', yaml_content: START_TEST, diagnostics: [] });
    const id = created.body.id as string;

    const list = await server.request('GET', `/v1/flows/${flowId}/tests`, { jwt: account.jwt });
    expect(list.body.map((t: { id: string; name: string }) => [t.id, t.name])).toEqual([[id, 'the game starts']]);

    const renamed = START_TEST.replace('name: the game starts', 'name: a game starts').replace('state: playing', 'state: plaing');
    const replaced = await server.request('PUT', `/v1/flows/${flowId}/tests/${id}`, { apiKey: account.apiKey, body: { yaml_content: renamed } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.name).toBe('a game starts');
    // A state the flow lacks is accepted (the flow may be about to get it), and said.
    expect(replaced.body.diagnostics).toMatchObject([{ severity: 'warning', code: 'unknown_state', line: 7, column: 14 }]);
    expect((await server.request('GET', `/v1/flows/${flowId}/tests/${id}`, { apiKey: account.apiKey })).body.yaml_content).toBe(renamed);

    expect((await server.request('DELETE', `/v1/flows/${flowId}/tests/${id}`, { apiKey: account.apiKey })).status).toBe(204);
    expectError(await server.request('GET', `/v1/flows/${flowId}/tests/${id}`, { apiKey: account.apiKey }), 404, 'flow_test_not_found');
    expectError(await server.request('DELETE', `/v1/flows/${flowId}/tests/${id}`, { apiKey: account.apiKey }), 404, 'flow_test_not_found');
  });

  it('refuses a test with errors, each at its line and column, and stores nothing', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const response = await server.request('POST', `/v1/flows/${flowId}/tests`, {
      apiKey: account.apiKey,
      body: { yaml_content: 'name: broken\nsteps:\n  - user: hi\n    expect: {says: "/(/"}\n  - simulate: {tol: begin_game}\n' },
    });
    expectError(response, 422, 'invalid_flow_test');
    expect(response.body.error.details.map((d: { code: string; line: number; column: number }) => `${d.code} ${d.line}:${d.column}`)).toEqual([
      'invalid_pattern 4:20',
      'missing_key 5:5',
      'unknown_key 5:16',
    ]);
    expect((await server.request('GET', `/v1/flows/${flowId}/tests`, { apiKey: account.apiKey })).body).toEqual([]);
    expectError(await server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: account.apiKey, body: { yaml: START_TEST } }), 422, 'invalid_request');
  });

  it("never shows or runs another account's flow tests", async () => {
    const flowId = await createFlow(server, account.apiKey);
    await server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: account.apiKey, body: { yaml_content: START_TEST } });
    const other = await createAccount(server);
    expectError(await server.request('GET', `/v1/flows/${flowId}/tests`, { apiKey: other.apiKey }), 404, 'flow_not_found');
    expectError(await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: other.apiKey, body: {} }), 404, 'flow_not_found');
    expectError(await server.request('GET', `/v1/flows/${flowId}/tests/export`, { apiKey: other.apiKey }), 404, 'flow_not_found');
  });

  it('imports a suite file as one test each, and exports them as a suite the CLI runs', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const imported = await server.request('POST', `/v1/flows/${flowId}/tests/import`, { apiKey: account.apiKey, body: { yaml_content: SUITE_YAML } });
    expect(imported.status).toBe(201);
    const names = parseFlowTests(SUITE_YAML).tests!.map((t) => t.name);
    expect(imported.body.tests.map((t: { name: string }) => t.name)).toEqual(names);
    // Each stored test is its own document, comments inside it kept.
    expect(imported.body.tests[0].yaml_content).toContain('# The caller talks over the agent while it celebrates');

    const exported = await server.request('GET', `/v1/flows/${flowId}/tests/export`, { apiKey: account.apiKey });
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(exported.headers.get('content-disposition')).toBe('attachment; filename="Guessing-game.tests.yaml"');
    const again = parseFlowTests(exported.text);
    expect(again.diagnostics).toEqual([]);
    expect(again.tests).toEqual(parseFlowTests(SUITE_YAML).tests);
  });
});

describe('running a flow’s tests', () => {
  it('runs them as a job: 202 at once, then the result with every step and the coverage', async () => {
    const flowId = await createFlow(server, account.apiKey);
    const imported = await server.request('POST', `/v1/flows/${flowId}/tests/import`, { apiKey: account.apiKey, body: { yaml_content: SUITE_YAML } });
    const ids = imported.body.tests.map((t: { id: string }) => t.id);

    const started = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: {} });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ flow_id: flowId, mode: 'scripted', draft: false, flow_version: 1, test_ids: ids });
    const run = await waitForRun(flowId, started.body.id);
    expect(run.status).toBe('passed');
    expect(run.result.tests.map((t: { test_id: string; passed: boolean }) => [t.test_id, t.passed])).toEqual(ids.map((id: string) => [id, true]));
    expect(run.result.coverage.transitions).toMatchObject({ uncovered: [], fraction: 1 });
    const barge = run.result.tests[0].runs[0].steps[5];
    expect(barge).toMatchObject({ action: 'user: Wait, really?', passed: true, state: 'won' });
    expect(barge.transcript[0]).toMatchObject({ role: 'agent', interrupted: true });

    const runs = await server.request('GET', `/v1/flows/${flowId}/tests/runs`, { apiKey: account.apiKey });
    expect(runs.body.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([[started.body.id, 'passed']]);
    expect(runs.body[0].result).toBeUndefined();
  });

  it("runs the draft when asked (the studio's edits) and the published version otherwise", async () => {
    const flowId = await createFlow(server, account.apiKey);
    const test = await server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: account.apiKey, body: { yaml_content: START_TEST } });
    // The draft sends begin_game to `lost` by mistake.
    const draft = GAME_YAML.replace('        begin_game: playing', '        begin_game: lost');
    expect((await server.request('PUT', `/v1/flows/${flowId}/draft`, { jwt: account.jwt, body: { yaml_content: draft } })).status).toBe(200);

    const onDraft = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { jwt: account.jwt, body: { draft: true, test_ids: [test.body.id] } });
    expect(onDraft.body).toMatchObject({ draft: true, flow_version: null });
    const failed = await waitForRun(flowId, onDraft.body.id);
    expect(failed.status).toBe('failed');
    const check = failed.result.tests[0].runs[0].steps[0].checks.find((c: { check: string }) => c.check === 'state');
    expect(check).toMatchObject({ passed: false, expected: 'playing', actual: 'lost' });

    const published = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: {} });
    expect((await waitForRun(flowId, published.body.id)).status).toBe('passed');
  });

  it('runs one suite of an account at a time: a second run asked for at once is refused with 429, saying the limit', async () => {
    const flowId = await createFlow(server, account.apiKey);
    await server.request('POST', `/v1/flows/${flowId}/tests/import`, { apiKey: account.apiKey, body: { yaml_content: SUITE_YAML } });
    const [first, second] = await Promise.all([
      server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: {} }),
      server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: {} }),
    ]);
    expect([first.status, second.status].sort()).toEqual([202, 429]);
    const refused = first.status === 429 ? first : second;
    expectError(refused, 429, 'test_run_in_progress');
    expect(refused.body.error.details).toEqual([{ limit: 'test_runs_per_account', max: 1 }]);
    const started = first.status === 202 ? first : second;
    expect((await waitForRun(flowId, started.body.id)).status).toBe('passed');
    // Once it is over, the next run starts.
    const next = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: {} });
    expect(next.status).toBe(202);
    await waitForRun(flowId, next.body.id);
  });

  it('refuses what it cannot run, with a coded reason', async () => {
    const flowId = await createFlow(server, account.apiKey);
    expectError(await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: {} }), 422, 'invalid_request');
    await server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: account.apiKey, body: { yaml_content: START_TEST } });
    // This server has no language model configured.
    const model = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model' } });
    expectError(model, 422, 'test_mode_unavailable');
    expect(model.body.error.message).toContain('language model');
    expectError(await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'telepathy' } }), 422, 'invalid_request');
    expectError(await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: { test_ids: ['nope'] } }), 404, 'flow_test_not_found');
    expectError(await server.request('GET', `/v1/flows/${flowId}/tests/runs/nope`, { apiKey: account.apiKey }), 404, 'test_run_not_found');
    // Nothing was started by any of these.
    expect((await server.request('GET', `/v1/flows/${flowId}/tests/runs`, { apiKey: account.apiKey })).body).toEqual([]);
  });
});
