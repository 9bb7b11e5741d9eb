// Flow tests: how long a 20-step scripted test takes (replies play on the runner's stepped clock,
// so it is the cost of the engine's turns, not of speech); 100 runs of a simulated caller against
// the fake model (the booking example: a patient, the agent, a judge), and the runner's own time
// per caller turn beside the model's; and the guessing game's spoken test (flite → Silero → the
// Deepgram fake → turn-taking) streamed in real time and 4× faster.
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests, type FlowTest } from '../../server/flow/tests-format.ts';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import { createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { createSileroVad, releaseSileroModels } from '../../server/providers/turn/silero.ts';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import type { LanguageModel } from '../../server/providers/types.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { startFakeOpenAI } from '../fakes/openai-server.ts';
import { BOOKING, CALLER_TEST, GOOD_JUDGE, rules } from '../support/booking-simulated-callers.ts';
import { GAME_YAML, SUITE_YAML } from '../support/guessing-game-tests.ts';
import { ms, percentile, timeRuns, type BenchRow } from './bench-kit.ts';
import { threadCpu, threadCpuReport } from './thread-cpu.ts';

/** Starts a game, asks 17 questions, wins, and starts again: 20 typed steps. */
function twentySteps(): FlowTest {
  const steps: FlowTest['steps'] = [
    { user: "I'm ready", expect: { tool_called: { name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }, state: 'playing' }, reply: 'Ask away.' },
  ];
  for (let n = 1; n <= 17; n++) {
    steps.push({
      user: `Question number ${n}?`,
      expect: { tool_called: { name: 'record_answer', arguments: { last_answer: 'no', questions_asked: String(n) } }, variables: { questions_asked: String(n) } },
      reply: 'No, it is not. What is your next question?',
    });
  }
  steps.push({ user: 'Is it a cat?', expect: { tool_called: { name: 'guess_correct' }, state: 'won', says: "That's it" }, reply: 'Well done! Another round?' });
  steps.push({ user: 'Yes please', expect: { tool_called: { name: 'play_again' }, state: 'setup' } });
  return { name: 'twenty steps', steps };
}

/**
 * The model, timed: every wait on it (each streamed chunk's, each judge's answer) is added to
 * `ms`, so what a run took beyond it is the runner's own (the engine, the caller's and the judge's
 * prompts, the checks). Time the runner spends between two chunks is not the model's.
 */
function timed(llm: LanguageModel): LanguageModel & { ms: number } {
  const wrapped = {
    provider: llm.provider,
    model: llm.model,
    ms: 0,
    stream(request: Parameters<LanguageModel['stream']>[0]) {
      const inner = llm.stream(request)[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]: () => ({
          async next() {
            const started = performance.now();
            try {
              return await inner.next();
            } finally {
              wrapped.ms += performance.now() - started;
            }
          },
          return: async (value?: unknown) => (await inner.return?.(value)) ?? { done: true as const, value: undefined },
        }),
      };
    },
    async completeJson(request: Parameters<NonNullable<LanguageModel['completeJson']>>[0]) {
      const started = performance.now();
      try {
        return await llm.completeJson!(request);
      } finally {
        wrapped.ms += performance.now() - started;
      }
    },
  };
  return wrapped as LanguageModel & { ms: number };
}

const load = () => loadavg().map((n) => n.toFixed(1)).join(' / ');

/** 100 simulated-caller runs of the booking example against the fake model, and the runner's own time per caller turn. */
async function simulatedCallers(): Promise<BenchRow[]> {
  const fake = await startFakeOpenAI({ rules: rules(GOOD_JUDGE) });
  try {
    const test = parseFlowTests(CALLER_TEST, BOOKING).tests![0]!;
    const llm = timed(createOpenAILanguageModel({ baseUrl: fake.url, timeoutMs: 20_000 }));
    const once = await runTests(BOOKING, [test], { mode: 'model', providers: { llm }, repeat: 3 });
    if (!once.passed) throw new Error('the simulated caller does not pass');

    const runs = 100;
    const parallel = 4;
    const loadBefore = load();
    const started = performance.now();
    const hundred = await runTests(BOOKING, [{ ...test, runs }], { mode: 'model', providers: { llm }, parallel });
    const wall = performance.now() - started;
    const loadAfter = load();
    if (!hundred.passed || hundred.tests[0]!.runs.length !== runs) throw new Error(`${runs} simulated runs did not all pass`);

    // One after the other, so the model's time and the runner's do not overlap across runs.
    const serial = 20;
    llm.ms = 0;
    const cpuBefore = process.cpuUsage();
    const serialStarted = performance.now();
    const one = await runTests(BOOKING, [{ ...test, runs: serial }], { mode: 'model', providers: { llm }, parallel: 1 });
    const serialWall = performance.now() - serialStarted;
    const cpu = process.cpuUsage(cpuBefore);
    const turns = one.tests[0]!.runs.reduce((sum, r) => sum + (r.caller?.turns ?? 0), 0);
    const own = (serialWall - llm.ms) / turns;
    const model = llm.ms / turns;
    return [
      {
        name: `${runs} simulated-caller runs (booking example: caller, agent and judge all the fake model)`,
        value: `${(wall / 1000).toFixed(2)} s (${ms(wall / runs)} a run); load average ${loadBefore} before, ${loadAfter} after (1/5/15 min)`,
        target: '≤ 10 s',
        how: `runTests, model mode, one test with runs: ${runs}, ${parallel} at once (the CLI's default), the fake OpenAI over a local socket in this process; after 3 warm-up runs`,
      },
      {
        name: "the runner's own time per caller turn, beyond the model's",
        value: `${ms(own)} (the model's own: ${ms(model)} a turn; ${turns} turns in ${serial} runs); CPU of the whole process ${ms((cpu.user + cpu.system) / 1000 / turns)} a turn, the fake model's server and the SDK included; load average ${load()}`,
        target: '≤ 5 ms',
        how: `${serial} runs one after the other: wall time less every wait on the model (each streamed chunk, each judge's answer), over the caller's turns (each run: 2 turns, the greeting, 2 agent answers and a judgement); on a loaded machine the wall time counts the waits for a core too, and the CPU time is the steadier figure`,
      },
    ];
  } finally {
    await fake.close();
  }
}

export async function run(): Promise<BenchRow[]> {
  const game = parseFlow(GAME_YAML).document!;
  const long = twentySteps();
  const check = await runTests(game, [long], { mode: 'scripted', providers: {} });
  if (!check.passed) throw new Error('the 20-step test does not pass');
  const runs = 20;
  const scripted = await timeRuns(runs, () => runTests(game, [long], { mode: 'scripted', providers: {} }));
  const simulated = await simulatedCallers();

  const won = parseFlowTests(SUITE_YAML, game).tests![0]!;
  const lines = won.steps!.flatMap((s) => (s.user !== undefined ? [s.user] : []));
  const deepgram = await startFakeDeepgram({ transcripts: [] });
  const vad = createSileroVad();
  await vad.load();
  const spoken: Record<number, number> = {};
  // Where an audio run's work lands: the delay of this (the main) thread's event loop, which
  // paces every call's audio on a server, and the CPU of each thread, at 4× (the heaviest).
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  // The same measure over an idle while first: on a shared machine, what the others' load costs.
  const idleDelay = monitorEventLoopDelay({ resolution: 5 });
  idleDelay.enable();
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  idleDelay.disable();
  let threads = '';
  try {
    for (const speed of [1, 4]) {
      deepgram.transcripts.push(...lines);
      const cpuBefore = threadCpu();
      if (speed === 4) loopDelay.enable();
      const started = performance.now();
      const result = await runTests(game, [won], {
        mode: 'audio',
        speed,
        providers: { stt: createDeepgramSpeechToText({ apiKey: 'dg-test', baseUrl: deepgram.url }), tts: createFliteTts(), vad },
      });
      if (!result.passed) throw new Error(`the spoken test failed at ${speed}×`);
      spoken[speed] = performance.now() - started;
      if (speed === 4) {
        loopDelay.disable();
        threads = threadCpuReport(cpuBefore, threadCpu(), spoken[speed]);
      }
    }
  } finally {
    await deepgram.close();
    await shutdownFlite();
    await releaseSileroModels();
  }
  return [
    {
      name: 'scripted test of 20 typed steps (guessing game)',
      value: `${ms(percentile(scripted, 50))} p50, ${ms(percentile(scripted, 95))} p95`,
      how: `one test, a session start to end, median and p95 of ${runs} runs after 3 warm-ups`,
    },
    ...simulated,
    {
      name: "guessing game's spoken test (7 steps, a barge-in), real time",
      value: `${(spoken[1]! / 1000).toFixed(1)} s`,
      how: 'audio mode at speed 1: flite lines, Silero, the Deepgram fake over a socket, one run',
    },
    {
      name: "guessing game's spoken test, 4× faster than real time",
      value: `${(spoken[4]! / 1000).toFixed(1)} s (${(spoken[1]! / spoken[4]!).toFixed(1)}× quicker)`,
      how: 'audio mode at speed 4, same run',
    },
    {
      name: "the spoken test at 4×: the main thread's event-loop delay (the thread that paces a server's audio)",
      value: `${ms(loopDelay.percentile(50) / 1e6)} p50, ${ms(loopDelay.percentile(99) / 1e6)} p99, ${ms(loopDelay.max / 1e6)} max (idle, just before: ${ms(idleDelay.percentile(99) / 1e6)} p99, ${ms(idleDelay.max / 1e6)} max); CPU by thread: ${threads}`,
      how: 'monitorEventLoopDelay (5 ms resolution) over the 4× run and over 5 s idle before the runs; CPU per thread from /proc over the 4× run',
    },
  ];
}
