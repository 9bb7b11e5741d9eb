import { afterAll, beforeAll, expect, test } from 'vitest';
import { busiestThread, threads } from '../../support/threads.ts';
import { int16ToFloat32 } from '../../../server/audio/pcm.ts';
import { shutdownFlite } from '../../../server/providers/tts/flite.ts';
import { SILERO_FRAME_SAMPLES, createSileroVad, releaseSileroModels } from '../../../server/providers/turn/silero.ts';
import type { VoiceActivityDetector } from '../../../server/providers/types.ts';
import { padWithSilence, synthesizeSpeech } from '../../support/speech.ts';

let frames: Float32Array[] = [];
beforeAll(async () => {
  const audio = padWithSilence(await synthesizeSpeech('My secret thing is a cat.'), 500, 500);
  for (let offset = 0; offset + SILERO_FRAME_SAMPLES <= audio.length; offset += SILERO_FRAME_SAMPLES) {
    frames.push(int16ToFloat32(audio.subarray(offset, offset + SILERO_FRAME_SAMPLES)));
  }
  await shutdownFlite();
});
afterAll(() => releaseSileroModels());

async function probabilities(detector: VoiceActivityDetector, input: Float32Array[]): Promise<number[]> {
  const out: number[] = [];
  for (const frame of input) out.push(await detector.probability(frame));
  return out;
}

test('speech frames score high and the silence around them low', async () => {
  const scores = await probabilities(createSileroVad().createDetector(), frames);
  expect(Math.max(...scores)).toBeGreaterThan(0.9);
  expect(Math.max(...scores.slice(0, 10))).toBeLessThan(0.1); // the first 320 ms are silence
});

test('two detectors fed interleaved frames score exactly as each would alone', async () => {
  const vad = createSileroVad();
  const alone = await probabilities(vad.createDetector(), frames);
  const silentFrame = new Float32Array(SILERO_FRAME_SAMPLES);
  const speaking = vad.createDetector();
  const listening = vad.createDetector();
  const interleaved: number[] = [];
  for (const frame of frames) {
    // Both calls in flight at once, as two sessions would be.
    const [score] = await Promise.all([speaking.probability(frame), listening.probability(silentFrame)]);
    interleaved.push(score);
  }
  expect(interleaved).toEqual(alone);
});

test('after reset a detector scores like a fresh one', async () => {
  const vad = createSileroVad();
  const fresh = await probabilities(vad.createDetector(), frames.slice(0, 40));
  const reused = vad.createDetector();
  await probabilities(reused, frames.slice(20, 40));
  reused.reset();
  expect(await probabilities(reused, frames.slice(0, 40))).toEqual(fresh);
});

test('a frame of the wrong size is refused', async () => {
  await expect(createSileroVad().createDetector().probability(new Float32Array(480))).rejects.toThrow(/512/);
});

test('a detector carries its memory from frame to frame: the same frame scores differently after speech', async () => {
  const vad = createSileroVad();
  const silentFrame = new Float32Array(SILERO_FRAME_SAMPLES);
  const speechFrames = frames.slice(20, 40);
  const probe = frames[30]!;
  // Both histories end in a silent frame, so the 64-sample context before `probe` is the same;
  // only the recurrent state differs.
  const afterSpeech = vad.createDetector();
  await probabilities(afterSpeech, [...speechFrames, silentFrame]);
  const afterSilence = vad.createDetector();
  await probabilities(afterSilence, [...speechFrames.map(() => silentFrame), silentFrame]);
  const [heard] = await probabilities(afterSpeech, [probe]);
  const [fresh] = await probabilities(afterSilence, [probe]);
  expect(Math.abs(heard! - fresh!)).toBeGreaterThan(0.01);
});

test('frames sent without waiting, by twenty detectors at once, score as each detector alone', async () => {
  const vad = createSileroVad();
  const alone = await probabilities(vad.createDetector(), frames);
  const detectors = Array.from({ length: 20 }, () => vad.createDetector());
  // A 100 ms chunk of audio is three frames handed over in one go, for every caller at once.
  const all = await Promise.all(detectors.map((detector) => Promise.all(frames.map((frame) => detector.probability(frame)))));
  for (const scores of all) expect(scores).toEqual(alone);
});

// The main thread's share of the inference CPU is a figure of the audio bench (npm run bench --
// audio): on a loaded machine it drifts with the cost of every hop, which says nothing about where
// the inference runs. That it runs elsewhere, at the process's own priority, is checked here: a
// nice value would make it yield to every busy process on the machine, and its answers (the
// caller's turns) came seconds late under load.
test('inference runs on a thread of its own, at the process’s priority', async () => {
  const vad = createSileroVad();
  await vad.load();
  const detectors = Array.from({ length: 10 }, () => vad.createDetector());
  const before = threads();
  await Promise.all(detectors.map((detector) => probabilities(detector, frames)));
  const busiest = busiestThread(before, threads());
  const main = threads().find((t) => t.tid === process.pid)!;
  expect(busiest.tid).not.toBe(process.pid);
  expect(busiest.nice).toBe(main.nice);
});

test('a model file that cannot be read fails load and every frame with a clear provider error', async () => {
  const vad = createSileroVad({ modelPath: '/nonexistent/silero.onnx' });
  await expect(vad.load()).rejects.toThrow(/cannot load the Silero model at \/nonexistent\/silero.onnx/);
  await expect(vad.createDetector().probability(frames[0]!)).rejects.toThrow(/Silero/);
});
