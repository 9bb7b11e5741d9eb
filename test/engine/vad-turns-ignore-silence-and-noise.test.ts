import { afterAll, expect, test } from 'vitest';
import { dbfs } from '../../server/audio/pcm.ts';
import { VadTurnTracker } from '../../server/engine/vad-turns.ts';
import { createSileroVad, releaseSileroModels } from '../../server/providers/turn/silero.ts';

afterAll(() => releaseSileroModels());

/** Uniform white noise at `level` dBFS RMS from a fixed seed, so a failure can be replayed. */
function whiteNoise(samples: number, level: number): Int16Array {
  const peak = 32768 * 10 ** (level / 20) * Math.sqrt(3); // uniform on [-a, a] has RMS a/√3
  let seed = 12345;
  return Int16Array.from({ length: samples }, () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return Math.round(peak * ((seed / 2 ** 32) * 2 - 1));
  });
}

async function turnEventsFor(audio: Int16Array): Promise<string[]> {
  const tracker = new VadTurnTracker(createSileroVad());
  const types: string[] = [];
  for (let offset = 0; offset < audio.length; offset += 1600) {
    for (const event of await tracker.push(audio.subarray(offset, offset + 1600))) types.push(event.type);
  }
  tracker.close();
  return types;
}

test('five seconds of digital silence start no turn', async () => {
  expect(await turnEventsFor(new Int16Array(5 * 16_000))).toEqual([]);
});

test('five seconds of white noise at -40 dBFS start no turn', async () => {
  const noise = whiteNoise(5 * 16_000, -40);
  expect(dbfs(noise)).toBeCloseTo(-40, 0);
  expect(await turnEventsFor(noise)).toEqual([]);
});
