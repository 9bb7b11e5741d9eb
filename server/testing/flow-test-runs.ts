// A flow's stored tests run as a job of the server: admitted, metered and recorded. Model and
// audio runs are admitted like a session (the account's providers, a place among its live
// sessions, credit for a minute), and each call it simulates (one run of one test) is metered as
// a call is: each part it uses is charged per minute from its first use (`test-run:<id>:call:<n>`
// in the ledger); a run whose next minute cannot be paid is stopped. So a run costs the calls it
// simulates, and says so before it starts: its estimate is each call's first minute of the parts
// its mode uses, and a balance that cannot pay it is refused (402). A scripted run needs no
// provider and costs nothing.
//
// A run drives whole voice sessions on this server, so it is bounded: runs in progress per
// account (claimed in the store, so the bound holds over every node on PostgreSQL), steps per
// model or audio run, and wall time per run. The API's route (api/flow-tests/runs.ts) only
// translates HTTP to this and back.
import type { FastifyBaseLogger } from 'fastify';
import { AppError, ERRORS, type ErrorCode } from '../errors.ts';
import { SessionMeter } from '../billing/metering.ts';
import type { VoiceEngine } from '../engine/voice-engine.ts';
import { suiteText, type FlowTest } from '../flow/tests-format.ts';
import type { FlowJobs } from '../jobs/flow-jobs.ts';
import type { Flow, FlowTestRunRecord, Store, StoreErrorCode } from '../store/store.ts';
import { embeddedVoiceActivity, meteredRunnerProviders } from './configured-providers.ts';
import type { TestMode } from './results.ts';
import { RunnerSetupError, checkRunnable, runTests, runsOf, simulatedCalls, stepsPlayed, type RunOptions } from './run-tests.ts';

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
  /**
   * Tests that are not stored (a replay of recorded sessions, replay.ts), one YAML text each,
   * run instead of the stored ones; the run's test_ids are then empty.
   */
  given?: string[];
}

/** What one account's runs may take of the server (config.limits; docs/testing.md). */
export interface RunLimits {
  /** Runs in progress at once, over every node sharing the store. */
  runsPerAccount: number;
  /** Steps one model or audio run may play (every test's steps, in each of its calls). */
  maxSteps: number;
  /** The longest one run may take, in milliseconds; then it ends with an error saying so. */
  maxRunMs: number;
}

/**
 * What a refused run's Retry-After says: a typed call of a few turns is over in seconds, and a
 * client that polls its run (GET …/tests/runs/{id}) learns sooner.
 */
const RETRY_RUN_AFTER_SECONDS = 10;

/** The most runs of one test played at once on the server, each holding a place among the account's live sessions. */
export const MAX_PARALLEL_RUNS = 4;

export const DEFAULT_RUN_LIMITS: RunLimits = { runsPerAccount: 1, maxSteps: 500, maxRunMs: 900_000 };

export interface FlowTestRunsDeps {
  store: Store;
  flowJobs: FlowJobs;
  engine: VoiceEngine;
  log: FastifyBaseLogger;
  limits?: RunLimits;
  /** Length of a billed minute (tests shorten it). */
  minuteMs?: number;
}

/** A run just started: its stored record, and what it is expected to cost. */
export interface StartedRun {
  record: FlowTestRunRecord;
  /** Cents: each simulated call's first minute of the parts its mode uses (0 for a scripted run). */
  estimatedCostCents: number;
}

/**
 * The parts a mode's calls use, and so pay for. A spoken simulated caller's call (audio mode)
 * uses all three: the model plays the caller and the agent, the voice speaks both, and speech to
 * text hears both.
 */
const PAID_PARTS = { scripted: [], model: ['llm'], audio: ['stt', 'tts'] } as const;
const SPOKEN_CALLER_PARTS = ['llm', 'stt', 'tts'] as const;

/** The parts one call of `test` uses in `mode`. */
function partsOf(test: FlowTest, mode: TestMode): readonly ('llm' | 'stt' | 'tts')[] {
  return mode === 'audio' && test.caller !== undefined ? SPOKEN_CALLER_PARTS : PAID_PARTS[mode];
}

type Admission = Awaited<ReturnType<VoiceEngine['admit']>>;
/** The run's place among the account's live sessions, and the further places its parallel runs hold. */
interface Admitted {
  admission: Admission | null;
  extra: Admission[];
}

type RunEnd = Parameters<Store['flowTests']['finishRun']>[1];

interface Job {
  runId: string;
  abort: AbortController;
  done: Promise<void>;
}

export class FlowTestRuns {
  /** Runs in progress in this process, by account. */
  private readonly running = new Map<string, Set<Job>>();
  private readonly limits: RunLimits;
  /**
   * Runs whose result is being written: on PostgreSQL the row says 'running' until that commits,
   * and such a run is no run cut by a stopped server.
   */
  private readonly ending = new Set<string>();

  constructor(private readonly deps: FlowTestRunsDeps) {
    this.limits = deps.limits ?? DEFAULT_RUN_LIMITS;
  }

  /** Whether this process is running (or recording) the run: a stored 'running' row without it was cut by a stop. */
  isLive(runId: string): boolean {
    return this.ending.has(runId) || this.jobs().some((job) => job.runId === runId);
  }

  private jobs(): Job[] {
    return [...this.running.values()].flatMap((jobs) => [...jobs]);
  }

  private inProgress(): AppError {
    const { runsPerAccount } = this.limits;
    return new AppError(
      'test_run_in_progress',
      `This account has ${runsPerAccount} flow test run${runsPerAccount === 1 ? '' : 's'} in progress, the most it may have at once (on any node); wait for a result first.`,
      [{ limit: 'test_runs_per_account', max: runsPerAccount }],
      { 'retry-after': String(RETRY_RUN_AFTER_SECONDS) },
    );
  }

  /** Stops every run in progress (each is recorded as cut by the stop) and waits for them. */
  async close(): Promise<void> {
    const jobs = this.jobs();
    for (const job of jobs) job.abort.abort();
    await Promise.all(jobs.map((job) => job.done));
  }

  /**
   * Admits and starts a run of the flow's tests, answering with its stored record once it has
   * started; the run goes on in the background. Refusals are the API's coded errors.
   */
  async start(accountId: string, flow: Flow, request: RunRequest): Promise<StartedRun> {
    const mine = this.running.get(accountId) ?? new Set<Job>();
    // This node's own runs are counted first, at no cost; the store counts every node's.
    if (mine.size >= this.limits.runsPerAccount) throw this.inProgress();
    // The account's place is taken before anything is awaited, so two runs asked for at once
    // cannot both start; it is given back if this one does not start.
    const job: Job = { runId: '', abort: new AbortController(), done: Promise.resolve() };
    mine.add(job);
    this.running.set(accountId, mine);
    const forget = () => {
      mine.delete(job);
      if (mine.size === 0 && this.running.get(accountId) === mine) this.running.delete(accountId);
    };
    const admitted: Admitted = { admission: null, extra: [] };
    let prepared: Awaited<ReturnType<FlowTestRuns['prepare']>>;
    try {
      prepared = await this.prepare(accountId, flow, request, admitted);
    } catch (error) {
      admitted.admission?.release();
      for (const extra of admitted.extra) extra.release();
      forget();
      throw error;
    }
    const { admission } = admitted;
    const { parsed, options, record, estimatedCostCents } = prepared;
    job.runId = record.id;
    const { store, log } = this.deps;
    let outOfCredit = false;
    let overTime = false;
    if (admission && admission.providers.ratePerMinute > 0) {
      const { partPrices } = admission.providers;
      let calls = 0;
      // Each simulated call pays as a call does: its parts per minute from their first use.
      options.startCall = async (providers) => {
        const meter = new SessionMeter(
          store.credits,
          accountId,
          `test-run:${record.id}:call:${++calls}`,
          partPrices,
          {
            onExhausted: () => {
              outOfCredit = true;
              job.abort.abort();
            },
            onError: (error) => {
              log.error({ err: error, run: record.id }, 'could not charge a minute of a flow test run');
              job.abort.abort();
            },
          },
          this.deps.minuteMs,
        );
        await meter.start();
        return { providers: meteredRunnerProviders(providers, (part) => meter.used(part)), end: () => meter.stop().catch(() => {}) };
      };
    }
    const wallTime = setTimeout(() => {
      overTime = true;
      job.abort.abort();
    }, this.limits.maxRunMs);
    wallTime.unref();
    const release = () => {
      clearTimeout(wallTime);
      admission?.release();
      for (const extra of admitted.extra) extra.release();
      forget();
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
          : overTime
            ? `The run was stopped after ${this.limits.maxRunMs / 1000} s, the longest a test run may take on this server; run fewer tests or fewer repeats at a time.`
            : job.abort.signal.aborted
              ? 'The server stopped during this run; run the tests again.'
              : `The run could not be completed: ${error instanceof Error ? error.message : String(error)}`;
        if (!job.abort.signal.aborted) log.warn({ err: error, run: record.id }, 'a flow test run failed');
        end = { status: 'error', resultJson: null, error: message };
      }
      try {
        await finish(end);
      } catch (error) {
        log.error({ err: error, run: record.id }, 'could not record the end of a flow test run');
      } finally {
        release();
      }
    })();
    return { record, estimatedCostCents };
  }

  /** The tests chosen and parsed against the flow, the providers admitted, and the run's record stored. */
  private async prepare(accountId: string, flow: Flow, request: RunRequest, admitted: Admitted) {
    const { store, flowJobs, engine } = this.deps;
    const stored = request.given ? request.given.map((yamlContent) => ({ id: '', yamlContent })) : await store.flowTests.list(accountId, flow.id);
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
    if (!parsed.tests) throw new AppError('invalid_flow_test', request.given ? 'A replayed session does not make a valid test.' : 'A stored test no longer validates; open it to see why.', parsed.diagnostics);

    const options: RunOptions = { mode: request.mode, providers: {}, repeat: request.repeat, minPassRate: request.minPassRate, speed: request.speed, flowId: flow.id };
    const steps = stepsPlayed(parsed.tests, options);
    if (request.mode !== 'scripted' && steps > this.limits.maxSteps) {
      throw new AppError(
        'test_run_too_large',
        `This run would play ${steps} steps (every test's steps, in each of its calls), and a ${request.mode} run may play ${this.limits.maxSteps}; run fewer tests or fewer repeats at a time.`,
        [{ limit: 'steps_per_run', max: this.limits.maxSteps, requested: steps }],
      );
    }
    let estimatedCostCents = 0;
    if (request.mode !== 'scripted') {
      try {
        admitted.admission = await engine.admit(accountId);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code && code in ERRORS) throw new AppError(code as ErrorCode, (error as Error).message);
        throw error;
      }
      const { partPrices } = admitted.admission.providers;
      const calls = simulatedCalls(parsed.tests, options);
      estimatedCostCents = parsed.tests.reduce((cents, test) => cents + runsOf(test, options) * partsOf(test, request.mode).reduce((sum, part) => sum + partPrices[part], 0), 0);
      if (estimatedCostCents > 0) {
        const balance = await store.credits.balance(accountId);
        if (balance < estimatedCostCents) {
          throw new AppError(
            'insufficient_credits',
            `This run simulates ${calls} call${calls === 1 ? '' : 's'}, estimated at ${estimatedCostCents} cents (each call's first minute), and the balance is ${balance}; add credit or run fewer tests or repeats.`,
          );
        }
      }
      const { llm, stt, tts } = admitted.admission.providers.providers;
      if (request.mode === 'model') {
        options.providers = { llm };
        options.parallel = 1 + (await this.extraPlaces(accountId, parsed.tests, options, admitted));
      }
      else {
        const vad = await embeddedVoiceActivity().catch(() => null);
        // A spoken simulated caller talks with the model's agent, and the model plays the caller.
        options.providers = parsed.tests.some((test) => test.caller !== undefined) ? { llm, stt, tts, vad } : { stt, tts, vad };
      }
    }
    try {
      checkRunnable(options, parsed.tests);
    } catch (error) {
      if (error instanceof RunnerSetupError) throw new AppError('test_mode_unavailable', error.message);
      throw error;
    }
    let record: FlowTestRunRecord;
    try {
      record = await store.flowTests.startRun(
        { accountId, flowId: flow.id, mode: request.mode, draft: draft !== null, flowVersion: draft ? null : flow.publishedVersion, testIds: request.given ? [] : tests.map((t) => t.id) },
        { perAccount: this.limits.runsPerAccount },
      );
    } catch (error) {
      // The store's TestRunSlotTakenError, told by its code (this layer sees the store's types only).
      if ((error as { code?: StoreErrorCode }).code === 'test_run_slot_taken') throw this.inProgress();
      throw error;
    }
    return { parsed, options, record, estimatedCostCents };
  }

  /**
   * Further places among the account's live sessions, for runs of one test played at once: as
   * many as the tests' runs can use, up to MAX_PARALLEL_RUNS, and no more than the account and the
   * server have free now (a place refused ends the asking; the run goes on with what it holds).
   */
  private async extraPlaces(accountId: string, tests: readonly FlowTest[], options: RunOptions, admitted: Admitted): Promise<number> {
    const wanted = Math.min(MAX_PARALLEL_RUNS, Math.max(1, ...tests.map((test) => runsOf(test, options)))) - 1;
    while (admitted.extra.length < wanted) {
      try {
        admitted.extra.push(await this.deps.engine.admit(accountId));
      } catch {
        break;
      }
    }
    return admitted.extra.length;
  }
}
