// Turn-taking, measured end to end on the real server with the turn-taking corpus
// (test/bench/turns/corpus.ts): each piece of caller audio is played into a call of its own at a
// known frame, and what the agent did is read from what came back. Per strategy (a row of
// STRATEGIES: a flow `turn:` setting and server flags) and per path (16 kHz over the WebSocket
// voice endpoint; 8 kHz μ-law over a fake Twilio's media stream):
//   - false barge-in rate: backchannels and noise, played 1 s into the agent's long greeting,
//     that stopped it (an `interrupted` event; on the phone, the carrier's `clear`);
//   - hiccups: the same pieces, not stopped, after which the agent's audio went quiet for 100 ms
//     or more and came back (it paused for them and resumed);
//   - true-interruption recall, and the time from the caller's speech start to the agent's last
//     audio frame (p50/p95);
//   - premature end-of-turn rate: sentences with a 300–1,200 ms pause inside, spoken after a short
//     greeting, that the agent began answering before they were over;
//   - response delay on complete short answers: from the end of the answer's sound to the
//     agent's first audio (p50); the provider fakes answer at once, so it is the turn decision's.
// Time is counted in the caller's frames: the caller sends one 20 ms frame every 20 ms, as a
// carrier paces a call, and each agent frame is stamped with the number of caller frames sent
// when it arrived (resolution 20 ms).
// Last, what one question to the end-of-turn model (--turn-model) costs, with the tests' tiny
// stand-in for Smart Turn v3 (input_features → mean → sigmoid): the Whisper features and ORT's
// overhead, a lower bound for the real model, whose network costs more.
// VOXFLOW_BENCH_TURN_STRATEGIES=baseline,… picks rows; VOXFLOW_BENCH_TURN_ITEMS=<part of an id> pieces; VOXFLOW_BENCH_TURN_PATHS=ws or phone one
// path; VOXFLOW_BENCH_TURN_PATHS=none runs only the model's row.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTurnModel } from '../../server/engine/turn-model.ts';
import { logMelFeatures } from '../../server/engine/turn-model-worker.mjs';
import { tinySmartTurnModel } from '../support/tiny-onnx.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { Call, FRAME_MS, framesOf, openCall, PATH_NAMES, startStack, type Path, type Stack, type TurnStrategy } from './turns/calls.ts';
import { loadCorpus, OVER_THE_AGENT, timedWords, type LoadedItem } from './turns/corpus.ts';

// Rows are added here as the engine learns them. The baseline is the engine before turn-taking
// rules, written as the flow keys that give it (docs/flows.md#turn-taking); `defaults` is what a
// flow that sets no `turn` gets.
export const STRATEGIES: TurnStrategy[] = [
  {
    name: 'baseline',
    turn: { backchannels: 'interrupt', min_interruption_words: 0, endpointing_ms: 500, max_endpointing_ms: 500 },
    about: "the engine before turn-taking rules: any speech Silero confirms over the agent (200 ms) is a barge-in; 500 ms of silence ends a turn",
  },
  {
    name: 'defaults',
    about: 'turn-taking defaults: speech over the agent pauses it, a backchannel or no words resumes it; the wait after the words adapts (250–1500 ms)',
  },
];

/** The agent's greeting has played this long when a piece is played over it. */
const INTO_GREETING_MS = 1000;
/** After a piece, how long the call goes on (silence) before it is judged. */
const LISTEN_AFTER_MS = 2500;
/** Agent audio this long absent is the end of its speech. */
const GAP_MS = 200;
/** Agent audio this long absent, then back, is a hiccup the caller hears (the agent paused and resumed). */
const HICCUP_MS = 100;
/**
 * Calls at once: one per server (speech recognition then knows whose words it hears), the four
 * servers (two strategies, two paths) at once.
 */
const CONCURRENT = 1;

// ── One piece, judged ─────────────────────────────────────────────────────────────────────────

interface Outcome {
  item: LoadedItem;
  /** Over the agent: did it stop? */
  stopped?: boolean;
  /** Caller speech start → the agent's last audio frame, ms (stopped pieces). */
  stopMs?: number;
  /** Over the agent and not stopped: its longest silence from the piece's start on, ms (a hiccup from HICCUP_MS). */
  pauseMs?: number;
  /** A caller turn: did the agent's answer begin before the piece's sound ended? */
  premature?: boolean;
  /** End of the piece's sound → the agent's first audio, ms. */
  replyMs?: number;
  /** The turn ends the server reported (WebSocket path only), for the per-item lines. */
  turnEnds?: string[];
  error?: string;
}

/** The longest run of caller frames with no agent audio between frames `from` and `to`, in ms. */
function longestSilence(call: Call, from: number, to: number): number {
  const at = call.agentAudio.map((a) => a.at).filter((f) => f >= from && f <= to);
  let longest = 0;
  for (let i = 1; i < at.length; i++) longest = Math.max(longest, at[i]! - at[i - 1]!);
  return longest * FRAME_MS;
}

/** The caller frame at which the agent's audio after `from` first went quiet for GAP_MS (its last frame's arrival). */
function lastAgentFrameAfter(call: Call, from: number): number | null {
  const after = call.agentAudio.filter((a) => a.at >= from - GAP_MS / FRAME_MS);
  for (let i = 0; i < after.length; i++) {
    const next = after[i + 1];
    if (!next || next.at - after[i]!.at >= GAP_MS / FRAME_MS) return after[i]!.at;
  }
  return null;
}

async function playOne(stack: Stack, path: Path, item: LoadedItem): Promise<Outcome> {
  const over = OVER_THE_AGENT.includes(item.category);
  // Speech is heard as its words, each once its sound has ended; noise as nothing.
  const heard = timedWords(item);
  stack.willHear(heard.words, heard.endsMs);
  const { call, hangUp } = await openCall(stack, path, over ? 'long' : 'short');
  try {
    const frames = framesOf(item, path);
    await call.wait(() => call.agentAudio.length > 0, 30_000, 'the greeting');
    const greetingFrom = call.agentAudio[0]!.at;
    if (over) {
      await call.wait(() => call.sent >= greetingFrom + INTO_GREETING_MS / FRAME_MS, 10_000, 'into the greeting');
      const first = call.play(frames);
      const end = first + frames.length + LISTEN_AFTER_MS / FRAME_MS;
      await call.wait(() => call.sent >= end, 30_000, 'the piece and after');
      const stopped = call.stops.some((s) => s >= first);
      const speechStart = first + item.soundStartMs / FRAME_MS;
      const last = stopped ? lastAgentFrameAfter(call, speechStart) : null;
      // The greeting must still have been playing, or "kept talking" would mean nothing.
      if (!stopped && call.agentMsSince(end - 10) === 0) return { item, error: 'the greeting ended before the piece was judged' };
      return { item, stopped, ...(last !== null ? { stopMs: (last - speechStart) * FRAME_MS } : {}), ...(!stopped ? { pauseMs: longestSilence(call, first, end) } : {}) };
    }
    // A caller turn: once the short greeting is over (no agent audio for 500 ms).
    await call.wait(() => call.sent - call.agentAudio.at(-1)!.at >= 500 / FRAME_MS, 30_000, 'the greeting to end');
    const first = call.play(frames);
    const soundEnd = first + item.soundEndMs / FRAME_MS;
    const answered = () => call.agentAudio.find((a) => a.at > first);
    await call.wait(() => answered() !== undefined || call.sent > soundEnd + 5000 / FRAME_MS, 30_000, 'an answer');
    const reply = answered();
    if (!reply) return { item, error: `no answer within 5 s of the end of the turn${call.turnEnds.length ? ` (${call.turnEnds.join('; ')})` : ''}` };
    return { item, premature: reply.at < soundEnd, replyMs: (reply.at - soundEnd) * FRAME_MS, turnEnds: [...call.turnEnds] };
  } finally {
    hangUp();
  }
}

async function playAll(stack: Stack, path: Path, items: LoadedItem[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENT }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        outcomes.push(await playOne(stack, path, item).catch((error: unknown) => ({ item, error: error instanceof Error ? error.message : String(error) })));
        // The account's live sessions are counted until the server has seen the hang-up.
        await new Promise((r) => setTimeout(r, 300));
      }
    }),
  );
  return outcomes;
}

// ── The table ────────────────────────────────────────────────────────────────────────────────

const pct = (n: number, of: number) => (of === 0 ? 'none' : `${n}/${of} (${((100 * n) / of).toFixed(0)} %)`);
const p = (values: number[], q: number) => (values.length === 0 ? NaN : percentile([...values].sort((a, b) => a - b), q));

function rows(strategy: TurnStrategy, path: Path, outcomes: Outcome[]): BenchRow[] {
  const judged = outcomes.filter((o) => !o.error);
  const of = (category: string) => judged.filter((o) => o.item.category === category);
  const falseStops = [...of('backchannel'), ...of('noise')];
  const hiccup = (o: Outcome) => !o.stopped && (o.pauseMs ?? 0) >= HICCUP_MS;
  const hiccupMs = falseStops.filter(hiccup).map((o) => o.pauseMs!);
  const interruptions = of('interruption');
  const pauses = of('pause');
  const answers = of('short_answer');
  const stopMs = interruptions.flatMap((o) => (o.stopMs !== undefined ? [o.stopMs] : []));
  const byPause = [300, 700, 1200].map((ms) => {
    const some = pauses.filter((o) => o.item.pauseMs === ms);
    return `${ms} ms: ${some.filter((o) => o.premature).length}/${some.length}`;
  });
  const replyMs = answers.flatMap((o) => (o.replyMs !== undefined ? [o.replyMs] : []));
  const failed = outcomes.filter((o) => o.error);
  const label = `${strategy.name}, ${PATH_NAMES[path]}`;
  const how = `${strategy.about}; one call per piece, ${CONCURRENT} at a time on each of four servers run at once; speech recognition hears each piece's words; caller frames of 20 ms counted`;
  return [
    {
      name: `${label}: false barge-in`,
      value: `${pct(falseStops.filter((o) => o.stopped).length, falseStops.length)}: backchannels ${of('backchannel').filter((o) => o.stopped).length}/${of('backchannel').length}, noise ${of('noise').filter((o) => o.stopped).length}/${of('noise').length}`,
      target: 'lower is better',
      how: `backchannels and coughs, bursts, horns played 1 s into a 12 s greeting; stopped = ${path === 'ws' ? 'an interrupted event' : "the carrier's clear"}; ${how}`,
    },
    {
      name: `${label}: hiccups (paused, then resumed)`,
      value: `${pct(falseStops.filter(hiccup).length, falseStops.length)}: backchannels ${of('backchannel').filter(hiccup).length}/${of('backchannel').length}, noise ${of('noise').filter(hiccup).length}/${of('noise').length}; the agent silent ${p(hiccupMs, 50)} / ${p(hiccupMs, 95)} ms p50/p95`,
      target: 'lower is better',
      how: `the same pieces, not stopped, after which the agent's audio went quiet for ${HICCUP_MS} ms or more and came back (the longest silence from the piece's start to the end of listening); a cut is a false barge-in, not a hiccup`,
    },
    {
      name: `${label}: true-interruption recall`,
      value: `${pct(interruptions.filter((o) => o.stopped).length, interruptions.length)}; speech start → agent's last frame ${p(stopMs, 50)} / ${p(stopMs, 95)} ms p50/p95`,
      target: 'higher, sooner is better',
      how: `"wait", "no, Tuesday", "stop, that's wrong" over the greeting; the last frame is the last agent audio before a ${GAP_MS} ms gap`,
    },
    {
      name: `${label}: premature end of turn, mid-turn pauses`,
      value: `${pct(pauses.filter((o) => o.premature).length, pauses.length)} (${byPause.join(', ')})`,
      target: 'lower is better',
      how: 'one sentence with a pause inside, after a short greeting; premature = the agent\'s answer began before the sentence\'s sound ended',
    },
    {
      name: `${label}: response delay, complete short answers`,
      value: `${p(replyMs, 50)} ms p50 (${p(replyMs, 95)} p95) over ${replyMs.length}`,
      target: 'lower is better',
      how: "end of the answer's sound → the agent's first audio; the provider fakes answer at once",
    },
    ...(failed.length > 0
      ? [{ name: `${label}: pieces not judged`, value: `${failed.length}`, how: [...new Set(failed.map((o) => o.error!.replace(/\s+/g, ' ')))].join('; ').slice(0, 300) }]
      : []),
  ];
}

/** One question to the end-of-turn model (8 s of speech-like audio), and the features alone. */
async function turnModelCost(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-bench-turn-model-'));
  try {
    const path = join(dir, 'tiny-smart-turn.onnx');
    await writeFile(path, tinySmartTurnModel());
    const model = await loadTurnModel(path);
    try {
      const pcm = Int16Array.from({ length: 8 * 16_000 }, (_, i) => Math.round(6000 * Math.sin(i / 7) * Math.sin(i / 3000)));
      for (let i = 0; i < 3; i++) await model.endOfTurnProbability(pcm);
      const asked: number[] = [];
      for (let i = 0; i < 20; i++) {
        const start = performance.now();
        await model.endOfTurnProbability(pcm);
        asked.push(performance.now() - start);
      }
      const features: number[] = [];
      for (let i = 0; i < 10; i++) {
        const start = performance.now();
        logMelFeatures(pcm);
        features.push(performance.now() - start);
      }
      return [
        {
          name: 'end-of-turn model: one question, tiny stand-in model',
          value: `${p(asked, 50).toFixed(0)} ms p50, ${p(asked, 95).toFixed(0)} ms p95 (the features alone: ${p(features, 50).toFixed(0)} ms p50)`,
          how: "20 questions of 8 s, one at a time, on the model's worker thread (features + ORT run + messages); a lower bound: Smart Turn v3's own network adds its inference",
        },
      ];
    } finally {
      await model.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchRow[]> {
  if (process.env.VOXFLOW_BENCH_TURN_PATHS === 'none') return turnModelCost();
  const only = process.env.VOXFLOW_BENCH_TURN_ITEMS;
  const items = (await loadCorpus((line) => process.stderr.write(`${line}\n`))).filter((item) => !only || item.id.includes(only));
  const wanted = process.env.VOXFLOW_BENCH_TURN_STRATEGIES?.split(',').map((s) => s.trim());
  const paths = (process.env.VOXFLOW_BENCH_TURN_PATHS?.split(',').map((p) => p.trim()) ?? ['ws', 'phone']) as Path[];
  const unknownPath = paths.find((path) => !(path in PATH_NAMES));
  if (unknownPath) throw new Error(`VOXFLOW_BENCH_TURN_PATHS: no path ${unknownPath}; the paths are ws, phone (or none: the model's row only)`);
  const unknown = wanted?.filter((name) => !STRATEGIES.some((s) => s.name === name)) ?? [];
  if (unknown.length > 0) throw new Error(`VOXFLOW_BENCH_TURN_STRATEGIES: no strategy ${unknown.join(', ')}; the strategies are ${STRATEGIES.map((s) => s.name).join(', ')}`);
  const runs = STRATEGIES.filter((s) => !wanted || wanted.includes(s.name)).flatMap((strategy) => paths.map((path) => ({ strategy, path })));
  // A server of its own per strategy and path (the account's credit pays for one corpus), all at once.
  const results = await Promise.all(
    runs.map(async ({ strategy, path }) => {
      const stack = await startStack(strategy);
      try {
        const outcomes = await playAll(stack, path, items);
        return { strategy, path, outcomes };
      } finally {
        await stack.rig.close();
      }
    }),
  );
  const out: BenchRow[] = [];
  for (const { strategy, path, outcomes } of results) {
    for (const o of outcomes) {
      process.stderr.write(
        `  ${strategy.name} ${path} ${o.item.id}: ${o.error ?? (o.stopped !== undefined ? (o.stopped ? `stopped${o.stopMs !== undefined ? ` ${o.stopMs} ms` : ''}` : `kept talking${(o.pauseMs ?? 0) >= HICCUP_MS ? `, silent ${o.pauseMs} ms` : ''}`) : `${o.premature ? 'premature' : 'one turn'}, answer ${o.replyMs} ms after${o.turnEnds?.length ? ` (${o.turnEnds.join('; ')})` : ''}`)}\n`,
      );
    }
    out.push(...rows(strategy, path, outcomes));
  }
  return [...out, ...(await turnModelCost())];
}
