// Running a flow's tests from the API: POST …/tests/run starts a job and answers 202 with its id
// at once; GET …/tests/runs/{run_id} has its status and, when it is over, the whole report (per
// test and step, expected against actual, the transcript, the path, and the flow's coverage).
// The studio runs the draft (`draft: true`); anything else runs the published version, as
// sessions do. Model and audio runs are admitted like a session (the account's providers, a
// place among its live sessions, credit for a minute) and metered like one: each part the run
// uses is charged per minute from its first use (`test-run:<id>` in the ledger); a run whose
// next minute cannot be paid is stopped. A scripted run needs no provider and costs nothing.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError, ERRORS, type ErrorCode } from '../../errors.ts';
import { suiteText } from '../../flow/tests-format.ts';
import { accountOf } from '../../http/services.ts';
import { parseInput } from '../../http/validation.ts';
import type { Flow, FlowTestRunRecord } from '../../store/store.ts';
import { SessionMeter } from '../../billing/metering.ts';
import { embeddedVoiceActivity, meteredRunnerProviders } from '../../testing/configured-providers.ts';
import type { SuiteResult } from '../../testing/results.ts';
import { MAX_REPEAT, MAX_SPEED, RunnerSetupError, TEST_MODES, checkRunnable, runTests, type RunOptions } from '../../testing/run-tests.ts';

type FlowParams = { Params: { flow_id: string } };
type RunParams = { Params: { flow_id: string; run_id: string } };

const RunBody = z
  .object({
    mode: z.enum(TEST_MODES).default('scripted'),
    /** Which stored tests, in this order; all of them when absent. */
    test_ids: z.array(z.string().max(100)).min(1).max(100).optional(),
    /** Run the draft (what the studio edits) rather than the published version. */
    draft: z.boolean().default(false),
    repeat: z.number().int().min(1).max(MAX_REPEAT).default(1),
    min_pass_rate: z.number().min(0).max(1).default(1),
    speed: z.number().min(1).max(MAX_SPEED).default(1),
  })
  .strict();

function runView(run: Omit<FlowTestRunRecord, 'resultJson'> & { resultJson?: string | null }, live: boolean) {
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
    mode: run.mode,
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

export async function flowTestRunRoutes(app: FastifyInstance, { ownFlow }: { ownFlow(accountId: string, id: string): Promise<Flow> }): Promise<void> {
  const { store, flowJobs, engine } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };
  /** Runs in progress in this process, by account (one each) and by id. */
  const running = new Map<string, { runId: string; abort: AbortController; done: Promise<void> }>();
  /**
   * Runs whose result is being written: on PostgreSQL the row says 'running' until that commits,
   * and such a run is no run cut by a stopped server.
   */
  const ending = new Set<string>();
  const isLive = (runId: string) => ending.has(runId) || [...running.values()].some((job) => job.runId === runId);

  app.addHook('preClose', async () => {
    const jobs = [...running.values()];
    for (const job of jobs) job.abort.abort();
    await Promise.all(jobs.map((job) => job.done));
  });

  app.post<FlowParams>('/v1/flows/:flow_id/tests/run', { config }, async (request, reply) => {
    const body = parseInput(RunBody, request.body ?? {});
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    if (running.has(accountId)) throw new AppError('test_run_in_progress');
    // The account's place is taken before anything is awaited, so two runs asked for at once
    // cannot both start; it is given back if this one does not start.
    const job = { runId: '', abort: new AbortController(), done: Promise.resolve() };
    running.set(accountId, job);
    const abort = job.abort;
    // Set by prepare(); cast so that the code after it does not read it as always null.
    let admission = null as Awaited<ReturnType<typeof engine.admit>> | null;
    const prepare = async () => {
      const stored = await store.flowTests.list(accountId, flow.id);
      const byId = new Map(stored.map((t) => [t.id, t]));
      const chosen = body.test_ids ? body.test_ids.map((id) => byId.get(id) ?? null) : stored;
      const missing = body.test_ids?.filter((id) => !byId.has(id)) ?? [];
      if (missing.length > 0) throw new AppError('flow_test_not_found', `This flow has no test with the id "${missing[0]}".`);
      if (chosen.length === 0) throw new AppError('invalid_request', 'This flow has no tests yet: add one first.');
      const tests = chosen.map((t) => t!);

      const draft = body.draft ? await store.flowVersions.getDraft(accountId, flow.id) : null;
      const flowYaml = draft?.yamlContent ?? flow.yamlContent;
      const parsed = await flowJobs.parseTests(accountId, suiteText(tests.map((t) => ({ yaml: t.yamlContent }))), flowYaml);
      if (!parsed.flow) throw new AppError('invalid_flow', draft ? 'The draft has errors: fix them before running its tests.' : 'The flow does not validate any more; open it in the editor.');
      if (!parsed.tests) throw new AppError('invalid_flow_test', 'A stored test no longer validates; open it to see why.', parsed.diagnostics);

      const options: RunOptions = { mode: body.mode, providers: {}, repeat: body.repeat, minPassRate: body.min_pass_rate, speed: body.speed, flowId: flow.id };
      if (body.mode !== 'scripted') {
        try {
          admission = await engine.admit(accountId);
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (code && code in ERRORS) throw new AppError(code as ErrorCode, (error as Error).message);
          throw error;
        }
        const { llm, stt, tts } = admission.providers.providers;
        if (body.mode === 'model') options.providers = { llm };
        else {
          const vad = await embeddedVoiceActivity().catch(() => null);
          options.providers = { stt, tts, vad };
        }
      }
      try {
        checkRunnable(options);
      } catch (error) {
        admission?.release();
        if (error instanceof RunnerSetupError) throw new AppError('test_mode_unavailable', error.message);
        throw error;
      }

      let record: FlowTestRunRecord;
      try {
        record = await store.flowTests.startRun({ accountId, flowId: flow.id, mode: body.mode, draft: draft !== null, flowVersion: draft ? null : flow.publishedVersion, testIds: tests.map((t) => t.id) });
      } catch (error) {
        admission?.release();
        throw error;
      }
      return { tests, parsed, draft, options, record };
    };
    let prepared: Awaited<ReturnType<typeof prepare>>;
    try {
      prepared = await prepare();
    } catch (error) {
      admission?.release();
      if (running.get(accountId) === job) running.delete(accountId);
      throw error;
    }
    const { parsed, options, record } = prepared;
    job.runId = record.id;
    let meter: SessionMeter | null = null;
    let outOfCredit = false;
    if (admission && admission.providers.ratePerMinute > 0) {
      meter = new SessionMeter(store.credits, accountId, `test-run:${record.id}`, admission.providers.partPrices, {
        onExhausted: () => {
          outOfCredit = true;
          abort.abort();
        },
        onError: (error) => {
          app.log.error({ err: error, run: record.id }, 'could not charge a minute of a flow test run');
          abort.abort();
        },
      });
      await meter.start();
      options.providers = meteredRunnerProviders(options.providers, (part) => meter!.used(part));
    }
    /**
     * The result is applied to the store at once (its durable write is awaited after), and the
     * account may start its next run from that moment: a client that reads the result and runs
     * again at once must not meet its own finished run as "in progress".
     */
    const finish = (end: Parameters<typeof store.flowTests.finishRun>[1]) => {
      const written = store.flowTests.finishRun(record.id, end);
      ending.add(record.id);
      void written.finally(() => ending.delete(record.id)).catch(() => {});
      admission?.release();
      if (running.get(accountId) === job) running.delete(accountId);
      return written;
    };
    job.done = (async () => {
      let end: Parameters<typeof store.flowTests.finishRun>[1];
      try {
        const result = await runTests(parsed.flow!, parsed.tests!, { ...options, signal: abort.signal });
        end = { status: result.passed ? 'passed' : 'failed', resultJson: JSON.stringify(result), error: null };
      } catch (error) {
        const message = outOfCredit
          ? 'The credit ran out during this run; add credit and run the tests again.'
          : abort.signal.aborted
            ? 'The server stopped during this run; run the tests again.'
            : `The run could not be completed: ${error instanceof Error ? error.message : String(error)}`;
        if (!abort.signal.aborted) app.log.warn({ err: error, run: record.id }, 'a flow test run failed');
        end = { status: 'error', resultJson: null, error: message };
      }
      await meter?.stop().catch(() => {});
      try {
        await finish(end);
      } catch (error) {
        app.log.error({ err: error, run: record.id }, 'could not record the end of a flow test run');
      } finally {
        admission?.release();
        if (running.get(accountId) === job) running.delete(accountId);
      }
    })();
    return reply.status(202).send(runView(record, true));
  });

  app.get<FlowParams>('/v1/flows/:flow_id/tests/runs', { config }, async (request) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    return (await store.flowTests.listRuns(accountId, flow.id)).map((run) => runView(run, isLive(run.id)));
  });

  app.get<RunParams>('/v1/flows/:flow_id/tests/runs/:run_id', { config }, async (request) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const run = await store.flowTests.getRun(accountId, flow.id, request.params.run_id);
    if (!run) throw new AppError('test_run_not_found');
    return runView(run, isLive(run.id));
  });
}
