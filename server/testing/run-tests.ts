// The flow-test runner: one engine for every way of running a test. Each run drives a real voice
// session (server/engine) as a client would and checks what a client sees; the modes differ only
// in who plays the agent and how the user's turns arrive:
//
// A step's keys (`dtmf`) reach the session as a phone's keypad would press them, in every mode.
//
//   mode      user's turns                                agent                 agent's voice, clock
//   scripted  typed                                       the test's script     silent, stepped (instant)
//   model     typed                                       the configured model  silent, stepped
//   audio     spoken: flite → VAD → STT → turn-taking     the test's script     the configured voice, real time × speed
//
// Every mode shares the step checks (checks.ts) and the coverage (flow/tests-coverage.ts).
//
// A test with a simulated caller (`caller:`) has no steps: a model plays the caller against the
// configured model playing the agent until one of them ends the call (caller-call.ts), typed in
// model mode, spoken in audio mode (through the voice, VAD and STT both ways). A script cannot
// answer a caller it does not know, so scripted mode refuses it. A test's `runs` runs it that many times, several at once when the run
// allows (`parallel`), and its result is the share that passed.
import { expectedCalls, type FlowTest, type TestStep } from '../flow/tests-format.ts';
import { DEFAULT_CALLER_TURNS } from '../flow/tests-caller.ts';
import { flowCoverage, mergeExercised } from '../flow/tests-coverage.ts';
import type { FlowDocument } from '../flow/types.ts';
import { countToolCall, noAdherence, type Adherence } from '../protocol/adherence.ts';
import type { LanguageModel, SpeechToText, TextToSpeech, VoiceActivityModel } from '../providers/types.ts';
import { synthesizeLines } from './caller-audio.ts';
import { checkBudget, checkStep, describeAction, exercisedBy, pathOf, transcriptOf } from './checks.ts';
import { runCallerCall } from './caller-call.ts';
import { pacedClock, steppedClock } from './clocks.ts';
import type { StepResult, SuiteResult, TestMode, TestResult, TestRun } from './results.ts';
import { createScriptModel } from './script-model.ts';
import { createSilentVoice } from './silent-voice.ts';
import { TestSession } from './test-session.ts';
import { scriptedToolSender } from './tool-answers.ts';

export const TEST_MODES = ['scripted', 'model', 'audio'] as const satisfies readonly TestMode[];

export interface RunnerProviders {
  /** The configured model: model mode needs it, and so does a simulated caller in audio mode. */
  llm?: LanguageModel | null;
  /** Audio mode: speech to text. */
  stt?: SpeechToText | null;
  /** Audio mode: the agent's voice, which also says the caller's lines. */
  tts?: TextToSpeech | null;
  /** Audio mode: the voice activity model (Silero). */
  vad?: VoiceActivityModel | null;
}

export interface RunOptions {
  mode: TestMode;
  providers: RunnerProviders;
  /** Runs per test in model mode (a model does not answer the same way every time); a test's own `runs` wins. */
  repeat?: number;
  /** Runs of one test played at once (default 1: one after the other). */
  parallel?: number;
  /** A test passes when at least this share of its runs pass (default 1: all of them). */
  minPassRate?: number;
  /** Audio mode: 1 is real time, 2 twice as fast. */
  speed?: number;
  /** The longest the agent may take over one step, in real milliseconds. */
  stepTimeoutMs?: number;
  /** The flow resource's id, reported in session_started. */
  flowId?: string | null;
  signal?: AbortSignal;
  /**
   * Each simulated call (one run of one test) begins here and gets the providers it uses, e.g.
   * metered as a call of its own; `end` is awaited once the call is over.
   */
  startCall?(providers: RunnerProviders): Promise<{ providers: RunnerProviders; end(): Promise<void> }>;
  /** Each test's result as soon as it is known. */
  onTest?(result: TestResult): void;
}

/** The run cannot start: a mode's provider is missing. */
export class RunnerSetupError extends Error {
  override name = 'RunnerSetupError';
}

export const DEFAULT_STEP_TIMEOUT_MS: Record<TestMode, number> = { scripted: 10_000, model: 60_000, audio: 60_000 };
export const MAX_REPEAT = 20;
export const MAX_SPEED = 4;

/** What a mode needs, said before anything runs. */
export function checkRunnable(options: RunOptions, tests: readonly FlowTest[] = []): void {
  const { mode, providers } = options;
  const simulated = tests.filter((t) => t.caller !== undefined).map((t) => `"${t.name}"`);
  if (simulated.length > 0 && mode === 'scripted') {
    throw new RunnerSetupError(`${simulated.join(', ')} ${simulated.length === 1 ? 'has a simulated caller, which talks' : 'have simulated callers, which talk'} to the configured model: run ${simulated.length === 1 ? 'it' : 'them'} in model mode (--mode model)`);
  }
  if (simulated.length > 0 && mode === 'audio' && !providers.llm) throw new RunnerSetupError(`${simulated.join(', ')} ${simulated.length === 1 ? 'has a simulated caller, which talks' : 'have simulated callers, which talk'} to the configured model: configure one (VOXFLOW_LLM_PROVIDER, VOXFLOW_LLM_BASE_URL, VOXFLOW_LLM_MODEL)`);
  if (mode === 'model' && !providers.llm) throw new RunnerSetupError('model mode needs a language model: configure one (VOXFLOW_LLM_PROVIDER, VOXFLOW_LLM_BASE_URL, VOXFLOW_LLM_MODEL)');
  if (mode === 'audio') {
    if (!providers.stt) throw new RunnerSetupError('audio mode needs speech to text: configure one (VOXFLOW_STT_PROVIDER)');
    if (!providers.tts) throw new RunnerSetupError('audio mode needs a voice for the caller and the agent');
    if (!providers.vad) throw new RunnerSetupError('audio mode needs the voice activity model');
  }
  const repeat = options.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > MAX_REPEAT) throw new RunnerSetupError(`repeat must be a whole number from 1 to ${MAX_REPEAT}`);
  const speed = options.speed ?? 1;
  if (!(speed >= 1 && speed <= MAX_SPEED)) throw new RunnerSetupError(`speed must be from 1 (real time) to ${MAX_SPEED}`);
}

export async function runTests(flow: FlowDocument, tests: readonly FlowTest[], options: RunOptions): Promise<SuiteResult> {
  checkRunnable(options, tests);
  const started = performance.now();
  const results: TestResult[] = [];
  for (const test of tests) {
    options.signal?.throwIfAborted();
    const result = await runTest(flow, test, options);
    results.push(result);
    options.onTest?.(result);
  }
  options.signal?.throwIfAborted();
  return {
    mode: options.mode,
    passed: results.every((r) => r.passed),
    tests: results,
    coverage: flowCoverage(flow, mergeExercised(results.flatMap((r) => r.runs.map((run) => run.exercised)))),
    duration_ms: Math.round(performance.now() - started),
  };
}

export async function runTest(flow: FlowDocument, test: FlowTest, options: RunOptions): Promise<TestResult> {
  const runs = await inParallel(runsOf(test, options), Math.max(1, options.parallel ?? 1), () => {
    options.signal?.throwIfAborted();
    return runOnce(flow, test, options);
  });
  const passRate = runs.filter((r) => r.passed).length / runs.length;
  const minPassRate = test.min_pass_rate ?? options.minPassRate ?? 1;
  return {
    name: test.name,
    passed: passRate >= minPassRate,
    pass_rate: passRate,
    min_pass_rate: minPassRate,
    runs,
    coverage: flowCoverage(flow, mergeExercised(runs.map((r) => r.exercised))),
    adherence: options.mode === 'scripted' ? null : adherenceOf(runs),
  };
}

/** How many times a test is run: its own `runs`, else the run's repeat in model mode; a script once. */
export function runsOf(test: FlowTest, options: Pick<RunOptions, 'mode' | 'repeat'>): number {
  if (options.mode !== 'model') return 1;
  return test.runs ?? options.repeat ?? 1;
}

/** `count` results of `work`, at most `width` at a time, in the order they were started. */
async function inParallel<T>(count: number, width: number, work: () => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await work();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, lane));
  return results;
}

/** The model's calls over every run, in all and by the state each was made in. */
function adherenceOf(runs: readonly TestRun[]): NonNullable<TestResult['adherence']> {
  const total = { ...noAdherence(), by_state: {} as Record<string, Adherence> };
  for (const call of runs.flatMap((run) => run.steps.flatMap((step) => step.tool_calls))) {
    if (call.source !== 'model') continue;
    countToolCall(total, call);
    countToolCall((total.by_state[call.from_state] ??= noAdherence()), call);
  }
  return total;
}

/** The step after `index` acts this long into the agent's reply (a barge-in), if it says so. */
function bargeInOf(step: TestStep | undefined): number | undefined {
  if (!step || (step.user === undefined && !step.simulate && step.dtmf === undefined)) return undefined;
  return step.barge_in_after_ms;
}

async function runOnce(flow: FlowDocument, test: FlowTest, options: RunOptions): Promise<TestRun> {
  const call = options.startCall ? await options.startCall(options.providers) : null;
  try {
    const providers = call?.providers ?? options.providers;
    if (test.caller) return await runCallerCall(flow, test, test.caller, { ...options, providers, stepTimeoutMs: options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS[options.mode] });
    return await runCall(flow, test, test.steps ?? [], options, providers);
  } finally {
    await call?.end();
  }
}

/** How many voice sessions a run of `tests` drives: one per run of each test. */
export function simulatedCalls(tests: readonly FlowTest[], options: Pick<RunOptions, 'mode' | 'repeat'>): number {
  return tests.reduce((n, test) => n + runsOf(test, options), 0);
}

/** The steps a run of `tests` plays: every test's steps (a simulated caller's turns at most), in each of its calls. */
export function stepsPlayed(tests: readonly FlowTest[], options: Pick<RunOptions, 'mode' | 'repeat'>): number {
  return tests.reduce((n, test) => n + Math.max(1, test.caller ? (test.caller.max_turns ?? DEFAULT_CALLER_TURNS) : (test.steps?.length ?? 0)) * runsOf(test, options), 0);
}

async function runCall(flow: FlowDocument, test: FlowTest, testSteps: readonly TestStep[], options: RunOptions, providers: RunnerProviders): Promise<TestRun> {
  const { mode } = options;
  const started = performance.now();
  const audio = mode === 'audio';
  const script = mode === 'model' ? null : createScriptModel();
  const timeoutMs = options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS[mode];
  const steps: StepResult[] = [];
  let session: TestSession | null = null;
  // The step being played: its tool_results answer the http tools called during it.
  let current: TestStep | undefined;
  const signal = options.signal ?? new AbortController().signal;
  try {
    const lines = audio ? await synthesizeLines(providers.tts!, testSteps.flatMap((s) => (s.user !== undefined ? [s.user] : [])), signal) : null;
    session = new TestSession({
      flow,
      flowId: options.flowId ?? null,
      context: test.context ?? {},
      llm: script ?? providers.llm!,
      tts: audio ? providers.tts! : createSilentVoice(),
      stt: audio ? providers.stt! : null,
      vad: audio ? providers.vad! : null,
      clock: audio ? pacedClock(options.speed ?? 1) : steppedClock(),
      sendToolRequest: scriptedToolSender(() => current?.tool_results),
    });
    await session.start();
    let settled = await session.settle({ fromEvent: 0, spoke: false, bargeInAfterMs: bargeInOf(testSteps[0]), timeoutMs, signal });
    if (settled === 'timeout') throw new Error(`the agent's greeting was not over after ${timeoutMs / 1000} s`);
    for (const [index, step] of testSteps.entries()) {
      signal.throwIfAborted();
      // A first step that only checks checks the greeting: what was said and shown on connecting.
      const from = index === 0 && step.user === undefined && !step.simulate && step.dtmf === undefined ? 0 : session.events.length;
      current = step;
      script?.plan(expectedCalls(step.expect), step.reply);
      const actedAt = performance.now();
      if (step.user !== undefined) {
        if (lines) session.speak(lines.get(step.user)!);
        else session.type(step.user);
      } else if (step.simulate) {
        session.simulate(step.simulate.tool, step.simulate.arguments ?? {});
      } else if (step.dtmf !== undefined) {
        session.pressKeys(step.dtmf);
      }
      settled = await session.settle({ fromEvent: from, spoke: audio && step.user !== undefined, bargeInAfterMs: bargeInOf(testSteps[index + 1]), timeoutMs, signal });
      signal.throwIfAborted();
      const all = session.events.map((e) => e.event);
      const unfinished = settled === 'timeout' ? `the agent was still busy after ${timeoutMs / 1000} s` : null;
      const result = checkStep(index, step, all.slice(from), all, { prompt: session.session.runtime?.systemPrompt() ?? '', unfinished });
      if (step.within_ms !== undefined) {
        result.checks.push(checkBudget(step.within_ms, session.events.slice(from), actedAt, audio && step.user !== undefined));
        result.passed = result.checks.every((c) => c.passed);
      }
      steps.push(result);
      if (settled === 'ended') {
        // The flow ended the call (or a limit did): what the test still wanted to do cannot happen.
        for (const [later, rest] of testSteps.slice(index + 1).entries()) steps.push(notReached(index + 1 + later, rest));
        break;
      }
    }
    return finishRun(session, steps, started, null);
  } catch (error) {
    if (signal.aborted) throw error;
    return finishRun(session, steps, started, error instanceof Error ? error.message : String(error));
  } finally {
    await session?.end();
  }
}

function notReached(index: number, step: TestStep): StepResult {
  const message = 'the session had ended before this step';
  return { index, action: describeAction(step), passed: false, checks: [{ check: 'finished', passed: false, expected: 'a live session', actual: 'ended', message }], transcript: [], tool_calls: [], path: [], state: '' };
}

export function finishRun(session: TestSession | null, steps: StepResult[], started: number, error: string | null): TestRun {
  const events = session?.events.map((e) => e.event) ?? [];
  return {
    passed: error === null && steps.every((s) => s.passed),
    steps,
    transcript: transcriptOf(events),
    path: pathOf(events),
    exercised: exercisedBy(events),
    duration_ms: Math.round(performance.now() - started),
    error,
  };
}
