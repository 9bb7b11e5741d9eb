// Flow tests: how long a 20-step scripted test takes (replies play on the runner's stepped clock,
// so it is the cost of the engine's turns, not of speech), and the guessing game's spoken test
// (flite → Silero → the Deepgram fake → turn-taking) streamed in real time and 4× faster.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests, type FlowTest } from '../../server/flow/tests-format.ts';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import { createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { createSileroVad, releaseSileroModels } from '../../server/providers/turn/silero.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { startFakeDeepgram } from '../fakes/deepgram-server.ts';
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

export async function run(): Promise<BenchRow[]> {
  const game = parseFlow(GAME_YAML).document!;
  const long = twentySteps();
  const check = await runTests(game, [long], { mode: 'scripted', providers: {} });
  if (!check.passed) throw new Error('the 20-step test does not pass');
  const runs = 20;
  const scripted = await timeRuns(runs, () => runTests(game, [long], { mode: 'scripted', providers: {} }));

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
