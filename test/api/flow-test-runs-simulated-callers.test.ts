// A stored test with a simulated caller, run over the API: its runs (the body's `runs`) play at
// once within the account's places, and the report has the pass rate, each run's transcript and
// path, how the call ended, and the judge's reason per criterion. Outside model mode it is refused
// with the reason; a second run while one is in progress is refused with Retry-After.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { BOOKING_PATH, CALLER_TEST, GOOD_JUDGE, rules, rulesFailingJudgements } from '../support/booking-simulated-callers.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';

let fake: FakeOpenAI;
let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let flowId: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ rules: rules(GOOD_JUDGE) });
  server = await startTestServer({ providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: fake.url } } });
  account = await createAccount(server);
  flowId = await createFlow(server, account.apiKey, 'Booking', readFileSync(BOOKING_PATH, 'utf8'));
  const stored = await server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: account.apiKey, body: { yaml_content: CALLER_TEST } });
  expect(stored.status).toBe(201);
});
afterAll(async () => {
  await fake.close();
});

async function finished(runId: string) {
  let run: any;
  await vi.waitFor(
    async () => {
      run = (await server.request('GET', `/v1/flows/${flowId}/tests/runs/${runId}`, { apiKey: account.apiKey })).body;
      expect(run.status).not.toBe('running');
    },
    { timeout: 60_000, interval: 100 },
  );
  return run;
}

describe('a simulated caller over the API', () => {
  it('runs it `runs` times and reports the pass rate, the failing run\'s transcript, path and the judge\'s reasons', { timeout: 90_000 }, async () => {
    fake.setRules(rulesFailingJudgements(2));
    const started = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model', runs: 3, min_pass_rate: 0.5 } });
    expect(started.status).toBe(202);
    const run = await finished(started.body.id);
    expect(run.status).toBe('passed');
    const test = run.result.tests[0];
    expect(test).toMatchObject({ name: 'a patient who wants Tuesday gets booked', passed: true, min_pass_rate: 0.5 });
    expect(test.pass_rate).toBeCloseTo(2 / 3);
    expect(test.runs).toHaveLength(3);
    const failed = test.runs.find((r: any) => !r.passed);
    expect(failed.path).toEqual(['welcome', 'offer_slot', 'booked']);
    expect(failed.transcript).toContainEqual({ role: 'user', text: 'Do you have anything on Tuesday?' });
    expect(failed.caller).toMatchObject({ turns: 2, ended_by: 'flow' });
    expect(failed.judgement.criteria[0]).toEqual({ criterion: 'The caller is booked on a Tuesday', passed: false, reason: 'No booking was confirmed.' });
    expect(failed.steps[0].checks).toContainEqual(expect.objectContaining({ check: 'judge', passed: false, message: 'not met: The caller is booked on a Tuesday — No booking was confirmed.' }));
  });

  it('is refused outside model mode, saying why', async () => {
    const refused = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'scripted' } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'test_mode_unavailable' });
    expect(refused.body.error.message).toContain('has a simulated caller, which talks to the configured model: run it in model mode');
  });

  it('refuses a second run while one is in progress with 429 and Retry-After', { timeout: 90_000 }, async () => {
    // The judge takes its time: the first run is still in progress when the second is asked for.
    fake.setRules([{ when: { jsonSchemaName: 'voxflow_judgement' }, respond: { ...(GOOD_JUDGE as object), hangMs: 3_000 } }, ...rules(GOOD_JUDGE)]);
    const first = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model' } });
    expect(first.status).toBe(202);
    const second = await server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model' } });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('10');
    expect(second.body.error.code).toBe('test_run_in_progress');
    expect((await finished(first.body.id)).status).toBe('passed');
  });
});
