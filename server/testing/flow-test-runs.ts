// A flow's stored tests run as a job of the server: admitted, metered and recorded. Model and
// audio runs are admitted like a session (the account's providers, a place among its live
// sessions, credit for a minute) and metered like one: each part the run uses is charged per
// minute from its first use (`test-run:<id>` in the ledger); a run whose next minute cannot be
// paid is stopped. A scripted run needs no provider and costs nothing. An account runs one at a
// time. The API's route (api/flow-tests/runs.ts) only translates HTTP to this and back.
import type { FastifyBaseLogger } from 'fastify';
import { AppError, ERRORS, type ErrorCode } from '../errors.ts';
import { SessionMeter } from '../billing/metering.ts';
import type { VoiceEngine } from '../engine/voice-engine.ts';
import { suiteText } from '../flow/tests-format.ts';
import type { FlowJobs } from '../jobs/flow-jobs.ts';
import type { Flow, FlowTestRunRecord, Store } from '../store/store.ts';
import { embeddedVoiceActivity, meteredRunnerProviders } from './configured-providers.ts';
import type { TestMode } from './results.ts';
import { RunnerSetupError, checkRunnable, runTests, type RunOptions } from './run-tests.ts';

/** What a client asks of a run (the API's body, with its defaults applied). */
export interface RunRequest {
  mode: TestMode;
  /** Which stored tests, in this order; all of them when absent. */
  testIds?: string[];
  /** Run the draft (what the studio edits) rather than the published version. */
  draft: boolean;
  repeat: number;
  minPassRate: number;
  speed: number;
}

export interface FlowTestRunsDeps {
  store: Store;
  flowJobs: FlowJobs;
  engine: VoiceEngine;
  log: FastifyBaseLogger;
}

type RunEnd = Parameters<Store['flowTests']['finishRun']>[1];

interface Job {
  runId: string;
  abort: AbortController;
  done: Promise<void>;
}

export class FlowTestRuns {
  /** Runs in progress in this process, by account (one each). */
  private readonly running = new Map<string, Job>();
  /**
   * Runs whose result is being written: on PostgreSQL the row says 'running' until that commits,
   * and such a run is no run cut by a stopped server.
   */
  private readonly ending = new Set<string>();

  constructor(private readonly deps: FlowTestRunsDeps) {}

  /** Whether this process is running (or recording) the run: a stored 'running' row without it was cut by a stop. */
  isLive(runId: string): boolean {
    return this.ending.has(runId) || [...this.running.values()].some((job) => job.runId === runId);
  }

  /** Stops every run in progress (each is recorded as cut by the stop) and waits for them. */
  async close(): Promise<void> {
    const jobs = [...this.running.values()];
    for (const job of jobs) job.abort.abort();
    await Promise.all(jobs.map((job) => job.done));
  }

  /**
   * Admits and starts a run of the flow's tests, answering with its stored record once it has
   * started; the run goes on in the background. Refusals are the API's coded errors.
   */
  async start(accountId: string, flow: Flow, request: RunRequest): Promise<FlowTestRunRecord> {
    if (this.running.has(accountId)) throw new AppError('test_run_in_progress');
    // The account's place is taken before anything is awaited, so two runs asked for at once
    // cannot both start; it is given back if this one does not start.
    const job: Job = { runId: '', abort: new AbortController(), done: Promise.resolve() };
    this.running.set(accountId, job);
    const admitted: { admission: Awaited<ReturnType<VoiceEngine['admit']>> | null } = { admission: null };
    let prepared: Awaited<ReturnType<FlowTestRuns['prepare']>>;
    try {
      prepared = await this.prepare(accountId, flow, request, admitted);
    } catch (error) {
      admitted.admission?.release();
      if (this.running.get(accountId) === job) this.running.delete(accountId);
      throw error;
    }
    const { admission } = admitted;
    const { parsed, options, record } = prepared;
    job.runId = record.id;
    const { store, log } = this.deps;
    let meter: SessionMeter | null = null;
    let outOfCredit = false;
    if (admission && admission.providers.ratePerMinute > 0) {
      meter = new SessionMeter(store.credits, accountId, `test-run:${record.id}`, admission.providers.partPrices, {
        onExhausted: () => {
          outOfCredit = true;
          job.abort.abort();
        },
        onError: (error) => {
          log.error({ err: error, run: record.id }, 'could not charge a minute of a flow test run');
          job.abort.abort();
        },
      });
      await meter.start();
      options.providers = meteredRunnerProviders(options.providers, (part) => meter!.used(part));
    }
    const release = () => {
      admission?.release();
      if (this.running.get(accountId) === job) this.running.delete(accountId);
    };
    /**
     * The result is applied to the store at once (its durable write is awaited after), and the
     * account may start its next run from that moment: a client that reads the result and runs
     * again at once must not meet its own finished run as "in progress".
     */
    const finish = (end: RunEnd) => {
      const written = store.flowTests.finishRun(record.id, end);
      this.ending.add(record.id);
      void written.finally(() => this.ending.delete(record.id)).catch(() => {});
      release();
      return written;
    };
    job.done = (async () => {
      let end: RunEnd;
      try {
        const result = await runTests(parsed.flow!, parsed.tests!, { ...options, signal: job.abort.signal });
        end = { status: result.passed ? 'passed' : 'failed', resultJson: JSON.stringify(result), error: null };
      } catch (error) {
        const message = outOfCredit
          ? 'The credit ran out during this run; add credit and run the tests again.'
          : job.abort.signal.aborted
            ? 'The server stopped during this run; run the tests again.'
            : `The run could not be completed: ${error instanceof Error ? error.message : String(error)}`;
        if (!job.abort.signal.aborted) log.warn({ err: error, run: record.id }, 'a flow test run failed');
        end = { status: 'error', resultJson: null, error: message };
      }
      await meter?.stop().catch(() => {});
      try {
        await finish(end);
      } catch (error) {
        log.error({ err: error, run: record.id }, 'could not record the end of a flow test run');
      } finally {
        release();
      }
    })();
    return record;
  }

  /** The tests chosen and parsed against the flow, the providers admitted, and the run's record stored. */
  private async prepare(accountId: string, flow: Flow, request: RunRequest, admitted: { admission: Awaited<ReturnType<VoiceEngine['admit']>> | null }) {
    const { store, flowJobs, engine } = this.deps;
    const stored = await store.flowTests.list(accountId, flow.id);
    const byId = new Map(stored.map((t) => [t.id, t]));
    const chosen = request.testIds ? request.testIds.map((id) => byId.get(id) ?? null) : stored;
    const missing = request.testIds?.filter((id) => !byId.has(id)) ?? [];
    if (missing.length > 0) throw new AppError('flow_test_not_found', `This flow has no test with the id "${missing[0]}".`);
    if (chosen.length === 0) throw new AppError('invalid_request', 'This flow has no tests yet: add one first.');
    const tests = chosen.map((t) => t!);

    const draft = request.draft ? await store.flowVersions.getDraft(accountId, flow.id) : null;
    const flowYaml = draft?.yamlContent ?? flow.yamlContent;
    const parsed = await flowJobs.parseTests(accountId, suiteText(tests.map((t) => ({ yaml: t.yamlContent }))), flowYaml);
    if (!parsed.flow) throw new AppError('invalid_flow', draft ? 'The draft has errors: fix them before running its tests.' : 'The flow does not validate any more; open it in the editor.');
    if (!parsed.tests) throw new AppError('invalid_flow_test', 'A stored test no longer validates; open it to see why.', parsed.diagnostics);

    const options: RunOptions = { mode: request.mode, providers: {}, repeat: request.repeat, minPassRate: request.minPassRate, speed: request.speed, flowId: flow.id };
    if (request.mode !== 'scripted') {
      try {
        admitted.admission = await engine.admit(accountId);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code && code in ERRORS) throw new AppError(code as ErrorCode, (error as Error).message);
        throw error;
      }
      const { llm, stt, tts } = admitted.admission.providers.providers;
      if (request.mode === 'model') options.providers = { llm };
      else {
        const vad = await embeddedVoiceActivity().catch(() => null);
        options.providers = { stt, tts, vad };
      }
    }
    try {
      checkRunnable(options);
    } catch (error) {
      if (error instanceof RunnerSetupError) throw new AppError('test_mode_unavailable', error.message);
      throw error;
    }
    const record = await store.flowTests.startRun({ accountId, flowId: flow.id, mode: request.mode, draft: draft !== null, flowVersion: draft ? null : flow.publishedVersion, testIds: tests.map((t) => t.id) });
    return { parsed, options, record };
  }
}
