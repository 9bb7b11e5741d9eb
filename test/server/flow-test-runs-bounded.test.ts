// Flow test runs cannot take a server's CPU or an account's credit by surprise: the runs one
// account has in progress are bounded over every node on one PostgreSQL (not per node), a run past
// its wall time ends with an error saying so, and a model run says what it will cost before it
// starts, is refused when the balance cannot pay it, and is charged what it said: one first minute
// of the model per call it simulates.
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { ConfigInput } from '../../server/config.ts';
import { startFakeOpenAI, type ChatRule, type FakeOpenAI } from '../fakes/openai-server.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { GUESSING_GAME_TEST_RULES } from '../support/guessing-game-tests.ts';
import { twoServersForThisFile } from '../support/postgres-two-servers.ts';
import { createAccount, createFlow, type TestServer } from '../support/server.ts';

const nodes = twoServersForThisFile();

/** A suite of `n` one-step tests, as the import route takes it. */
const suiteOf = (n: number) =>
  `tests:\n${Array.from(
    { length: n },
    (_, i) => `  - name: the game starts ${i + 1}
    steps:
      - user: "I'm ready"
        expect: {tool_called: {name: begin_game, arguments: {secret_thing: a cat}}, state: playing}
`,
  ).join('')}`;
const READY = suiteOf(1);

/** The model answers the first "ready" only after `ms`: a run that holds its slot meanwhile. */
const slowModel = (ms: number): ChatRule[] => [{ when: { lastRole: 'user', lastUserText: /ready/i, nth: 1 }, respond: { hangMs: ms, text: 'One moment.' } }, ...GUESSING_GAME_TEST_RULES];

async function fakeModel(rules: ChatRule[]): Promise<FakeOpenAI> {
  const openai = await startFakeOpenAI({ rules });
  afterThisTest(() => openai.close());
  return openai;
}

const withModel = (openai: FakeOpenAI, extra: ConfigInput = {}): ConfigInput => ({ ...extra, providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url } } });

async function accountWithTests(server: TestServer, suite: string) {
  const account = await createAccount(server);
  const flowId = await createFlow(server, account.apiKey);
  const imported = await server.request('POST', `/v1/flows/${flowId}/tests/import`, { apiKey: account.apiKey, body: { yaml_content: suite } });
  expect(imported.status).toBe(201);
  return { ...account, flowId };
}

async function finished(server: TestServer, apiKey: string, flowId: string, runId: string) {
  let run: any;
  await vi.waitFor(
    async () => {
      run = (await server.request('GET', `/v1/flows/${flowId}/tests/runs/${runId}`, { apiKey })).body;
      expect(run.status).not.toBe('running');
    },
    { timeout: 60_000, interval: 100 },
  );
  return run;
}

const balanceOf = async (server: TestServer, apiKey: string) => (await server.request('GET', '/v1/credits/balance', { apiKey })).body.balance_usd_cents as number;

describe('flow test runs, bounded', () => {
  it("refuses an account's second run on the other node with 429 while it runs on the first, and starts another account's run there", { timeout: 120_000 }, async () => {
    // Long enough that the second node's refusal comes while the first run waits on the model,
    // even when a loaded machine takes seconds over the second node's first request; the model
    // answers once the other account's run has been seen through (endHangs below).
    const openai = await fakeModel(slowModel(60_000));
    const { a, b } = await nodes.start(withModel(openai));
    const one = await accountWithTests(a, READY);
    // The other account's suite is imported first: the second node's flow workers are started
    // before the clock of the first run's slow answer runs.
    const other = await accountWithTests(b, READY);

    const first = await a.request('POST', `/v1/flows/${one.flowId}/tests/run`, { apiKey: one.apiKey, body: { mode: 'model' } });
    expect(first.status).toBe(202);
    const second = await b.request('POST', `/v1/flows/${one.flowId}/tests/run`, { apiKey: one.apiKey, body: { mode: 'model' } });
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 'test_run_in_progress', details: [{ limit: 'test_runs_per_account', max: 1 }] });
    expect(second.body.error.message).toContain('1 flow test run in progress');
    // The first is still running: the refusal was the bound, not a run that had ended.
    expect((await a.request('GET', `/v1/flows/${one.flowId}/tests/runs/${first.body.id}`, { apiKey: one.apiKey })).body.status).toBe('running');

    const theirs = await b.request('POST', `/v1/flows/${other.flowId}/tests/run`, { apiKey: other.apiKey, body: {} });
    expect(theirs.status).toBe(202);
    expect((await finished(b, other.apiKey, other.flowId, theirs.body.id)).status).toBe('passed');

    // The first run still holds its slot until the model answers it.
    expect((await a.request('GET', `/v1/flows/${one.flowId}/tests/runs/${first.body.id}`, { apiKey: one.apiKey })).body.status).toBe('running');
    openai.endHangs();
    expect((await finished(a, one.apiKey, one.flowId, first.body.id)).status).not.toBe('running');
    // Its slot is free again, on either node.
    const again = await b.request('POST', `/v1/flows/${one.flowId}/tests/run`, { apiKey: one.apiKey, body: {} });
    expect(again.status).toBe(202);
    await finished(b, one.apiKey, one.flowId, again.body.id);
  });

  it('ends a run that outlasts its wall time with an error saying so, and frees the slot', { timeout: 120_000 }, async () => {
    const openai = await fakeModel(slowModel(60_000));
    const { a } = await nodes.start(withModel(openai, { limits: { testRunMaxSeconds: 2 } }));
    const account = await accountWithTests(a, READY);

    const started = await a.request('POST', `/v1/flows/${account.flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model' } });
    expect(started.status).toBe(202);
    const run = await finished(a, account.apiKey, account.flowId, started.body.id);
    expect(run.status).toBe('error');
    expect(run.error).toMatch(/stopped after 2 s, the longest a test run may take/);
    const next = await a.request('POST', `/v1/flows/${account.flowId}/tests/run`, { apiKey: account.apiKey, body: {} });
    expect(next.status).toBe(202);
    await finished(a, account.apiKey, account.flowId, next.body.id);
  });

  it('says what a model run will cost, charges exactly that (a first minute of the model per simulated call), and refuses one the balance cannot pay', { timeout: 120_000 }, async () => {
    const openai = await fakeModel(GUESSING_GAME_TEST_RULES);
    const { a } = await nodes.start(withModel(openai));
    const account = await accountWithTests(a, suiteOf(2));
    const before = await balanceOf(a, account.apiKey);
    const rate = (await a.request('GET', '/v1/credits/balance', { apiKey: account.apiKey })).body.parts.llm.rate_per_minute_usd_cents as number;
    expect(rate).toBeGreaterThan(0);

    // Two tests, three times each: six calls.
    const started = await a.request('POST', `/v1/flows/${account.flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model', repeat: 3 } });
    expect(started.status).toBe(202);
    expect(started.body.estimated_cost_usd_cents).toBe(6 * rate);
    const run = await finished(a, account.apiKey, account.flowId, started.body.id);
    expect(run.status).toBe('passed');
    await vi.waitFor(async () => expect(await balanceOf(a, account.apiKey)).toBe(before - 6 * rate), { timeout: 5_000 });
    // Nothing more trickles in afterwards.
    await delay(500);
    expect(await balanceOf(a, account.apiKey)).toBe(before - 6 * rate);

    // More calls than a new account's balance pays: refused before anything runs or is charged.
    const tests = Math.ceil((before / rate + 1) / 20);
    const big = await accountWithTests(a, suiteOf(tests));
    const bigBefore = await balanceOf(a, big.apiKey);
    const refused = await a.request('POST', `/v1/flows/${big.flowId}/tests/run`, { apiKey: big.apiKey, body: { mode: 'model', repeat: 20 } });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');
    expect(refused.body.error.message).toContain(`simulates ${tests * 20} calls, estimated at ${tests * 20 * rate} cents`);
    expect(await balanceOf(a, big.apiKey)).toBe(bigBefore);
    expect((await a.request('GET', `/v1/flows/${big.flowId}/tests/runs`, { apiKey: big.apiKey })).body).toEqual([]);
  });

  it('refuses a model run of more steps than a run may play with 422, saying the bound', { timeout: 60_000 }, async () => {
    const openai = await fakeModel(GUESSING_GAME_TEST_RULES);
    const { a } = await nodes.start(withModel(openai, { limits: { testRunMaxSteps: 5 } }));
    const account = await accountWithTests(a, suiteOf(3));
    const refused = await a.request('POST', `/v1/flows/${account.flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model', repeat: 2 } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'test_run_too_large', details: [{ limit: 'steps_per_run', max: 5, requested: 6 }] });
    const allowed = await a.request('POST', `/v1/flows/${account.flowId}/tests/run`, { apiKey: account.apiKey, body: { mode: 'model' } });
    expect(allowed.status).toBe(202);
    await finished(a, account.apiKey, account.flowId, allowed.body.id);
  });
});
