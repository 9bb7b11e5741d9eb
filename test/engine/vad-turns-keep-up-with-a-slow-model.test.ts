// The tracker when the model's answers come back late, as Silero's do from its worker thread on a
// loaded machine (round trips of 0.1–4 s were measured with two test suites on two cores).
import { expect, test } from 'vitest';
import { VadTurnTracker } from '../../server/engine/vad-turns.ts';
import type { VoiceActivityModel } from '../../server/providers/types.ts';
import type { TurnEvent } from '../../server/engine/turn-detector.ts';

/**
 * A model on a slow thread: it answers nothing until `answer()` is called, then every frame it
 * was asked so far, in order — as a worker drains its queue when it finally gets a core.
 */
function lateModel(frameSamples = 512) {
  const waiting: Array<() => void> = [];
  const model: VoiceActivityModel = {
    provider: 'late-energy',
    frameSamples,
    createDetector: () => ({
      probability: (frame: Float32Array) =>
        new Promise<number>((resolve) => {
          let sum = 0;
          for (const s of frame) sum += s * s;
          waiting.push(() => resolve(Math.sqrt(sum / frame.length) > 0.01 ? 0.9 : 0));
        }),
      reset: () => {},
      close: () => {},
    }),
  };
  return {
    model,
    /** Answers every frame asked so far and lets the tracker's promise chain run. */
    async answer(): Promise<void> {
      for (const resolve of waiting.splice(0)) resolve();
      // The tracker's chain of promises runs to its end before the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/** Silence, then a loud section whose samples count up (so any sample says where it came from), then silence. */
function utterance(silentMs: number, loudMs: number, afterMs: number): Int16Array {
  const before = silentMs * 16;
  const loud = loudMs * 16;
  const pcm = new Int16Array(before + loud + afterMs * 16);
  for (let i = 0; i < loud; i++) pcm[before + i] = 1000 + (i % 20000);
  return pcm;
}

/**
 * Pushes `audio` in 20 ms chunks, letting the model answer once every `chunksPerAnswer` chunks
 * (or after the chunks `answersAfter` says); returns the events with the pre-roll taken at speech start.
 */
async function run(audio: Int16Array, chunksPerAnswer: number | ((chunk: number) => boolean)) {
  const answersAfter = typeof chunksPerAnswer === 'number' ? (chunk: number) => (chunk + 1) % chunksPerAnswer === 0 : chunksPerAnswer;
  const late = lateModel();
  const tracker = new VadTurnTracker(late.model);
  const events: TurnEvent[] = [];
  let preRoll: Int16Array | null = null;
  let pushed = 0;
  let pushedAtStart = 0;
  for (let offset = 0, chunk = 0; offset < audio.length; offset += 320, chunk++) {
    void tracker.push(audio.subarray(offset, offset + 320)).then((found) => {
      for (const event of found) {
        events.push(event);
        if (event.type === 'speech_started') {
          preRoll = tracker.takePreRoll();
          pushedAtStart = pushed;
        }
      }
    });
    pushed = Math.min(audio.length, offset + 320);
    if (answersAfter(chunk)) await late.answer();
  }
  await late.answer();
  return { events, preRoll: preRoll as Int16Array | null, pushedAtStart };
}

test('a model that answers once every 200 ms of audio still hears the whole turn by the end of the audio', async () => {
  // Each answer takes longer than a frame lasts (32 ms): waiting for one answer before asking
  // about the next frame judged 6 frames a second and fell further behind with every word.
  const { events } = await run(utterance(1_000, 1_000, 1_000), 10);
  expect(events.map((event) => event.type)).toEqual(['speech_started', 'turn_ended']);
  // Positions are the audio's, however late the answers were.
  const started = events[0]!;
  expect(started.type === 'speech_started' && started.speechStartSample).toBe(15_872);
});

test('speech confirmed 3 s after it was spoken still hands the STT the words from 300 ms before them', async () => {
  const audio = utterance(1_000, 1_000, 3_000);
  // The model answers for the first time after 3.5 s of audio.
  const { events, preRoll, pushedAtStart } = await run(audio, 175);
  expect(events[0]).toMatchObject({ type: 'speech_started', speechStartSample: 15_872 });
  expect(pushedAtStart).toBeGreaterThanOrEqual(3_500 * 16);
  // The first voiced 512-sample frame starts at 15872; the pre-roll runs from 300 ms before it
  // to the newest sample received — the utterance whole, not the silence that followed it.
  expect(preRoll).toEqual(audio.subarray(15_872 - 300 * 16, pushedAtStart));
});

test('a model that falls behind after the audio has gone round the ring still hands the STT the turn sample for sample', async () => {
  // Six seconds of silence answered at once (the ring has gone round several times and holds
  // the newest audio only), then the model stalls for 4 s from just before the caller speaks:
  // the ring grows while its audio wraps, and must keep every sample in its place.
  const audio = utterance(6_000, 1_000, 3_000);
  const stalledFrom = 290; // chunk 290 = 5.8 s
  const { events, preRoll, pushedAtStart } = await run(audio, (chunk) => chunk < stalledFrom || chunk === stalledFrom + 200);
  expect(events[0]).toMatchObject({ type: 'speech_started' });
  const started = events[0]!;
  const at = started.type === 'speech_started' ? started.speechStartSample : -1;
  expect(at).toBeGreaterThanOrEqual(6_000 * 16 - 512);
  expect(pushedAtStart).toBeGreaterThanOrEqual((stalledFrom + 200) * 320);
  expect(preRoll).toEqual(audio.subarray(at - 300 * 16, pushedAtStart));
});
