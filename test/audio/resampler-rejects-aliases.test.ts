import { expect, test } from 'vitest';
import { dbfs } from '../../server/audio/pcm.ts';
import { resample } from '../../server/audio/resampler.ts';
import { tone } from './tones.ts';

test('a 10 kHz tone, above the 8 kHz limit of 16 kHz audio, is attenuated by at least 60 dB going 48k → 16k', () => {
  const input = tone(10_000, 48_000, 48_000);
  const output = resample(input, 48_000, 16_000);
  // Unfiltered, it would fold back to 6 kHz at full level.
  const middle = output.subarray(1000, output.length - 1000);
  expect(dbfs(input) - dbfs(middle)).toBeGreaterThanOrEqual(60);
});

test('going 24k → 16k, a 10 kHz tone is attenuated by at least 60 dB too', () => {
  const output = resample(tone(10_000, 24_000, 24_000), 24_000, 16_000);
  expect(dbfs(tone(10_000, 24_000, 24_000)) - dbfs(output.subarray(1000, output.length - 1000))).toBeGreaterThanOrEqual(60);
});

test('going 16k → 8k for a phone line, a 5 kHz tone (above its 4 kHz limit) is attenuated by at least 60 dB', () => {
  const input = tone(5_000, 16_000, 16_000);
  // Unfiltered, it would fold back to 3 kHz, well inside what a caller hears.
  const output = resample(input, 16_000, 8_000);
  expect(dbfs(input) - dbfs(output.subarray(500, output.length - 500))).toBeGreaterThanOrEqual(60);
});
