// Running a flow's tests from the API: POST …/tests/run starts a job and answers 202 with its id
// at once; GET …/tests/runs/{run_id} has its status and, when it is over, the whole report (per
// test and step, expected against actual, the transcript, the path, and the flow's coverage).
// The studio runs the draft (`draft: true`); anything else runs the published version, as
// sessions do. Admission, metering and recording are the run's own (testing/flow-test-runs.ts);
// this is their HTTP face.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { accountOf } from '../../http/services.ts';
import { optionalBody } from '../../http/validation.ts';
import { FlowTestRunView } from '../../protocol/api/flow-tests.ts';
import type { Flow, FlowTestRunRecord } from '../../store/store.ts';
import { FlowTestRuns } from '../../testing/flow-test-runs.ts';
import type { SuiteResult, TestMode } from '../../testing/results.ts';
import { MAX_REPEAT, MAX_SPEED, TEST_MODES } from '../../testing/run-tests.ts';
import { MAX_REPLAYED_SESSIONS, replayTestOf } from '../../testing/replay.ts';
import type { ServerEvent } from '../../protocol/events.ts';

const FlowParams = z.object({ flow_id: z.string() });
const RunParams = z.object({ flow_id: z.string(), run_id: z.string() });

const RunBody = optionalBody(z
  .object({
    mode: z.enum(TEST_MODES).default('scripted'),
    /** Which stored tests, in this order; all of them when absent. */
    test_ids: z.array(z.string().max(100)).min(1).max(100).optional(),
    /** Run the draft (what the studio edits) rather than the published version. */
    draft: z.boolean().default(false),
    repeat: z.number().int().min(1).max(MAX_REPEAT).default(1),
    /** The same as repeat (the CLI's --runs); a test's own `runs` wins over either. */
    runs: z.number().int().min(1).max(MAX_REPEAT).optional(),
    min_pass_rate: z.number().min(0).max(1).default(1),
    speed: z.number().min(1).max(MAX_SPEED).default(1),
  })
  .strict());

const ReplayBody = optionalBody(z
  .object({
    /** How many of the published version's latest ended sessions to replay against the draft. */
    sessions: z.number().int().min(1).max(MAX_REPLAYED_SESSIONS).default(5),
  })
  .strict());

/** Timeline pages read for one replayed session. */
const TIMELINE_PAGE = 1_000;

function runView(run: Omit<FlowTestRunRecord, 'resultJson'> & { resultJson?: string | null }, live: boolean): z.infer<typeof FlowTestRunView> {
  // A row left 'running' by a server that stopped mid-run: no job will ever finish it.
  const cut = run.status === 'running' && !live;
  let result: (SuiteResult & { tests: Array<SuiteResult['tests'][number] & { test_id: string | null }> }) | null = null;
  if (run.resultJson) {
    const parsed = JSON.parse(run.resultJson) as SuiteResult;
    result = { ...parsed, tests: parsed.tests.map((test, i) => ({ test_id: run.testIds[i] ?? null, ...test })) };
  }
  return {
    id: run.id,
    flow_id: run.flowId,
    mode: run.mode as TestMode,
    draft: run.draft,
    flow_version: run.flowVersion,
    test_ids: run.testIds,
    status: cut ? 'error' : run.status,
    error: cut ? 'The server stopped during this run; run the tests again.' : run.error,
    created_at: run.createdAt,
    finished_at: run.finishedAt,
    ...(run.resultJson === undefined ? {} : { result }),
  };
}

export async function flowTestRunRoutes(server: FastifyInstance, { ownFlow }: { ownFlow(accountId: string, id: string): Promise<Flow> }): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, flowJobs, engine } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };
  const { testRunsPerAccount, testRunMaxSteps, testRunMaxSeconds } = app.services.config.limits;
  const runs = new FlowTestRuns({
    store,
    flowJobs,
    engine,
    log: app.log,
    limits: { runsPerAccount: testRunsPerAccount, maxSteps: testRunMaxSteps, maxRunMs: testRunMaxSeconds * 1000 },
    minuteMs: app.services.minuteMs,
  });
  app.addHook('preClose', async () => runs.close());

  app.post('/v1/flows/:flow_id/tests/run', { config, schema: { params: FlowParams, body: RunBody, response: { 202: FlowTestRunView.describe('Started: poll GET …/tests/runs/{run_id} for the report') } } }, async (request, reply) => {
    const { body } = request;
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const { record, estimatedCostCents } = await runs.start(accountId, flow, {
      mode: body.mode,
      testIds: body.test_ids,
      draft: body.draft,
      repeat: body.runs ?? body.repeat,
      minPassRate: body.min_pass_rate,
      speed: body.speed,
    });
    return reply.status(202).send({ ...runView(record, true), estimated_cost_usd_cents: estimatedCostCents });
  });

  // The draft against what callers said to the published version: a model run of one test per
  // recorded session (testing/replay.ts), admitted, charged and reported as any model run is.
  app.post('/v1/flows/:flow_id/replays', { config, schema: { params: FlowParams, body: ReplayBody, response: { 202: FlowTestRunView.describe('Started: poll GET …/tests/runs/{run_id}; a failed state check is where the draft left the recorded path') } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const sessions = await store.sessions.listRecent(accountId, request.body.sessions, { flowId: flow.id, version: flow.publishedVersion, status: 'ended' });
    const given: string[] = [];
    for (const session of sessions) {
      const events: ServerEvent[] = [];
      for (let after = 0; ; ) {
        const page = await store.timelines.page(session.id, after, TIMELINE_PAGE);
        for (const entry of page) events.push(JSON.parse(entry.data) as ServerEvent);
        if (page.length < TIMELINE_PAGE) break;
        after = page.at(-1)!.seq;
      }
      const test = replayTestOf(session.id, events);
      if (test) given.push(test);
    }
    if (given.length === 0) throw new AppError('invalid_request', `No ended session of the published version (${flow.publishedVersion}) has a caller's turn to replay; talk to it first.`);
    const { record, estimatedCostCents } = await runs.start(accountId, flow, { mode: 'model', draft: true, repeat: 1, minPassRate: 1, speed: 1, given });
    return reply.status(202).send({ ...runView(record, true), estimated_cost_usd_cents: estimatedCostCents });
  });

  app.get('/v1/flows/:flow_id/tests/runs', { config, schema: { params: FlowParams, response: { 200: z.array(FlowTestRunView.describe('A run, without its report')) } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    return (await store.flowTests.listRuns(accountId, flow.id)).map((run) => runView(run, runs.isLive(run.id)));
  });

  app.get('/v1/flows/:flow_id/tests/runs/:run_id', { config, schema: { params: RunParams, response: { 200: FlowTestRunView } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const run = await store.flowTests.getRun(accountId, flow.id, request.params.run_id);
    if (!run) throw new AppError('test_run_not_found');
    return runView(run, runs.isLive(run.id));
  });
}
