// The tracker's own wiring, with a stand-in model that calls any frame with energy "speech".
import { expect, test } from 'vitest';
import { rms } from '../../server/audio/pcm.ts';
import { VadTurnTracker } from '../../server/engine/vad-turns.ts';
import type { VoiceActivityModel } from '../../server/providers/types.ts';

function energyModel(frameSamples = 512): VoiceActivityModel & { framesSeen: number[] } {
  const framesSeen: number[] = [];
  return {
    provider: 'energy',
    frameSamples,
    framesSeen,
    createDetector: () => ({
      // Deliberately slow and uneven, like real inference, so overlapping pushes would reorder if they could.
      probability: async (frame: Float32Array) => {
        await new Promise((resolve) => setTimeout(resolve, framesSeen.length % 3));
        framesSeen.push(frame.length);
        let sum = 0;
        for (const s of frame) sum += s * s;
        return Math.sqrt(sum / frame.length) > 0.01 ? 0.9 : 0;
      },
      reset: () => {},
      close: () => {},
    }),
  };
}

/** Silence, then a loud section whose samples count up, so any sample says where it came from. */
function marked(silentSamples: number, loudSamples: number): Int16Array {
  const pcm = new Int16Array(silentSamples + loudSamples);
  for (let i = 0; i < loudSamples; i++) pcm[silentSamples + i] = 1000 + (i % 20000);
  return pcm;
}

test('on speech start the pre-roll runs from 300 ms before the first voiced frame to the newest sample', async () => {
  const audio = marked(16_000, 16_000);
  const tracker = new VadTurnTracker(energyModel());
  let preRoll: Int16Array | null = null;
  let pushedWhenStarted = 0;
  for (let offset = 0; offset < audio.length && !preRoll; offset += 1600) {
    const events = await tracker.push(audio.subarray(offset, offset + 1600));
    if (events.some((event) => event.type === 'speech_started')) {
      preRoll = tracker.takePreRoll();
      pushedWhenStarted = offset + 1600;
    }
  }
  // The first voiced 512-sample frame starts at 15872 (the frame holding sample 16000).
  const from = 15_872 - 300 * 16;
  expect(preRoll).toEqual(audio.subarray(from, pushedWhenStarted));
  expect(rms(preRoll!.subarray(0, 300 * 16))).toBe(0);
});

test('outside a turn the pre-roll is the last 300 ms', async () => {
  const tracker = new VadTurnTracker(energyModel());
  const audio = Int16Array.from({ length: 10_000 }, (_, i) => i % 7); // too quiet to be speech
  await tracker.push(audio);
  expect(tracker.takePreRoll()).toEqual(audio.subarray(10_000 - 4800));
});

test('pushes that overlap are judged in the order they were made', async () => {
  const model = energyModel();
  const tracker = new VadTurnTracker(model);
  const audio = marked(8000, 16_000);
  const pending: Array<Promise<unknown>> = [];
  // Not awaited one by one: a transport pushes as chunks arrive.
  for (let offset = 0; offset < audio.length; offset += 1000) pending.push(tracker.push(audio.subarray(offset, offset + 1000)));
  const events = (await Promise.all(pending)).flat() as Array<{ type: string; speechStartSample: number }>;
  expect(events).toEqual([{ type: 'speech_started', speechStartSample: 7680, atSample: 7680 + 7 * 512 }]);
  expect(model.framesSeen).toHaveLength(Math.floor(audio.length / 512));
});
