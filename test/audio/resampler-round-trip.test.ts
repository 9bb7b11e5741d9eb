import { expect, test } from 'vitest';
import { dbfs } from '../../server/audio/pcm.ts';
import { resample } from '../../server/audio/resampler.ts';

/** Partials well inside the passband of every ratio below (under 3 kHz). */
function bandLimited(samples: number, sampleRate: number): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) => {
    const t = i / sampleRate;
    return Math.round(6000 * (Math.sin(2 * Math.PI * 300 * t) + Math.sin(2 * Math.PI * 1170 * t + 1) + 0.7 * Math.sin(2 * Math.PI * 2650 * t + 2)));
  });
}

test.each([
  [16_000, 48_000],
  [8_000, 16_000],
  [16_000, 24_000],
])('audio within the passband goes %i → %i Hz and back with the difference 40 dB below the signal', (rate, higher) => {
  const input = bandLimited(rate, rate);
  const back = resample(resample(input, rate, higher), higher, rate);
  const difference = input.map((sample, i) => sample - back[i]!);
  // Away from the ends, where the filters ramp in and out.
  const middle = (pcm: Int16Array) => pcm.subarray(200, pcm.length - 200);
  expect(back).toHaveLength(input.length);
  expect(dbfs(middle(input)) - dbfs(middle(difference))).toBeGreaterThan(40);
});
