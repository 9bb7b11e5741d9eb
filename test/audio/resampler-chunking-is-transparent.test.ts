import { expect, test } from 'vitest';
import { concatPcm } from '../../server/audio/pcm.ts';
import { StreamingResampler, resample } from '../../server/audio/resampler.ts';

/** Speech-like test signal: a few partials with a slow envelope, deterministic. */
function signal(samples: number, sampleRate: number): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) => {
    const t = i / sampleRate;
    const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 3 * t);
    return Math.round(9000 * envelope * (Math.sin(2 * Math.PI * 220 * t) + 0.5 * Math.sin(2 * Math.PI * 1330 * t) + 0.3 * Math.sin(2 * Math.PI * 3110 * t)));
  });
}

function inChunks(resampler: StreamingResampler, input: Int16Array, sizes: number[]): Int16Array {
  const out: Int16Array[] = [];
  for (let offset = 0, i = 0; offset < input.length; i++) {
    const size = sizes[i % sizes.length]!;
    out.push(resampler.process(input.subarray(offset, offset + size)));
    offset += size;
  }
  out.push(resampler.flush());
  return concatPcm(out);
}

test.each([
  [48_000, 16_000, [960]], // WebRTC's 20 ms frames
  [48_000, 16_000, [7, 1, 500, 2]],
  [16_000, 48_000, [320, 13, 1]],
  [24_000, 16_000, [4800, 17, 1]],
  [8_000, 16_000, [160, 3]],
])('%i → %i Hz in chunks of %j gives exactly the one-shot output, sample for sample', (from, to, sizes) => {
  const input = signal(from / 2 + 11, from);
  expect(inChunks(new StreamingResampler(from, to), input, sizes)).toEqual(resample(input, from, to));
});

test.each([
  [48_000, 16_000, 48_000, 16_000],
  [48_000, 16_000, 1001, 334],
  [16_000, 48_000, 1001, 3003],
  [24_000, 16_000, 1001, 668],
  [8_000, 16_000, 799, 1598],
])('%i → %i Hz: %i samples in give ceil(n × ratio) = %i out after flush', (from, to, inputLength, expected) => {
  expect(resample(signal(inputLength, from), from, to)).toHaveLength(expected);
});

test('while streaming, output lags input by a fixed filter delay, and flush returns exactly the rest', () => {
  const resampler = new StreamingResampler(48_000, 16_000);
  const first = resampler.process(new Int16Array(960));
  const second = resampler.process(new Int16Array(960));
  // The 47-tap filter is centred 23 input samples ahead of the sample it outputs, so output n
  // (at input 3n) waits for input 3n + 23: 313 of the first 320 are ready after 960 samples.
  expect(first.length).toBe(313);
  expect(second.length).toBe(320);
  expect(resampler.flush().length).toBe(640 - 313 - 320);
});

test('a resampler reused after flush starts a fresh stream', () => {
  const resampler = new StreamingResampler(16_000, 48_000);
  const input = signal(800, 16_000);
  const once = inChunks(resampler, input, [100]);
  expect(inChunks(resampler, input, [100])).toEqual(once);
});
