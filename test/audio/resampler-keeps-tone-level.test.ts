import { expect, test } from 'vitest';
import { concatPcm, dbfs } from '../../server/audio/pcm.ts';
import { StreamingResampler } from '../../server/audio/resampler.ts';
import { tone } from './tones.ts';

// Chunk sizes that are not multiples of the ratio's denominator, so phases carry across chunks.
const CHUNKS = [317, 1001, 29, 4000, 1];

test.each([
  [48_000, 16_000],
  [16_000, 48_000],
  [24_000, 16_000],
  [8_000, 16_000],
  // Agent speech going out to a phone line.
  [16_000, 8_000],
])('a 1 kHz tone keeps its level within 0.5 dB going %i → %i Hz in odd-sized chunks', (from, to) => {
  const input = tone(1000, from, from); // one second
  const resampler = new StreamingResampler(from, to);
  const chunks: Int16Array[] = [];
  for (let offset = 0, i = 0; offset < input.length; i++) {
    const size = CHUNKS[i % CHUNKS.length]!;
    chunks.push(resampler.process(input.subarray(offset, offset + size)));
    offset += size;
  }
  chunks.push(resampler.flush());
  const output = concatPcm(chunks);
  // The middle of the clip: away from the filter's ramp-in and ramp-out at the ends.
  const middle = output.subarray(Math.round(output.length * 0.1), Math.round(output.length * 0.9));
  expect(Math.abs(dbfs(middle) - dbfs(input))).toBeLessThan(0.5);
});
