import { expect, test } from 'vitest';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw, encodeG711, decodeG711, G711_SILENCE } from '../../server/audio/g711.ts';

// Pairs from ITU-T G.711's tables (as its reference code, G.191's g711.c, computes them): the
// codes for the extremes, for zero, and one from the middle of a segment.
test.each([
  [0xff, 0],
  [0x7f, 0], // μ-law's second zero, "negative zero"
  [0x00, -32124],
  [0x80, 32124],
  [0x0f, -16764],
  [0xf0, 120],
])('μ-law code %i decodes to %i', (code, sample) => {
  expect(decodeMulaw(Uint8Array.of(code))[0]).toBe(sample);
});

test.each([
  [0xd5, 8],
  [0x55, -8],
  [0xaa, 32256],
  [0x2a, -32256],
  [0x80, 5504],
  [0x00, -5504],
])('A-law code %i decodes to %i', (code, sample) => {
  expect(decodeAlaw(Uint8Array.of(code))[0]).toBe(sample);
});

test.each([
  [0, 0xff, 0xd5],
  [-1, 0x7f, 0x55],
  [32767, 0x80, 0xaa],
  [-32768, 0x00, 0x2a],
  // One's complement for negative A-law samples, as G.191 does: -31744 sits on a segment edge.
  [-31744, 0x00, 0x2b],
])('PCM16 %i encodes to μ-law code %i and A-law code %i', (sample, mulaw, alaw) => {
  expect(encodeMulaw(Int16Array.of(sample))[0]).toBe(mulaw);
  expect(encodeAlaw(Int16Array.of(sample))[0]).toBe(alaw);
});

const ALL_CODES = Uint8Array.from({ length: 256 }, (_, i) => i);

test('every μ-law code survives decode and encode, except negative zero, which comes back as zero', () => {
  const again = encodeMulaw(decodeMulaw(ALL_CODES));
  for (let code = 0; code < 256; code++) expect(again[code], `code 0x${code.toString(16)}`).toBe(code === 0x7f ? 0xff : code);
});

test('every A-law code survives decode and encode', () => {
  expect(Array.from(encodeAlaw(decodeAlaw(ALL_CODES)))).toEqual(Array.from(ALL_CODES));
});

test('every PCM16 sample comes back within one quantisation step of its segment, for both laws', () => {
  const samples = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
  const mulaw = decodeMulaw(encodeMulaw(samples));
  const alaw = decodeAlaw(encodeAlaw(samples));
  let worstMulaw = 0;
  let worstAlaw = 0;
  for (let i = 0; i < samples.length; i++) {
    const magnitude = Math.abs(samples[i]!);
    // A step is a sixteenth of the segment's start: (|x| + 132) / 16 for μ-law, |x| / 16 (at least 16) for A-law.
    worstMulaw = Math.max(worstMulaw, Math.abs(mulaw[i]! - samples[i]!) / ((magnitude + 132) / 16));
    worstAlaw = Math.max(worstAlaw, Math.abs(alaw[i]! - samples[i]!) / Math.max(16, magnitude / 16));
  }
  expect(worstMulaw).toBeLessThanOrEqual(1);
  expect(worstAlaw).toBeLessThanOrEqual(1);
});

test('a 20 ms frame encodes into a caller-supplied buffer and decodes into another, leaving the rest alone', () => {
  const frame = Int16Array.from({ length: 160 }, (_, i) => Math.round(9000 * Math.sin(i / 4)));
  const bytes = new Uint8Array(200).fill(0x11);
  const encoded = encodeG711('alaw', frame, bytes);
  expect(encoded).toHaveLength(160);
  expect(encoded.buffer).toBe(bytes.buffer);
  expect(bytes[160]).toBe(0x11);
  const pcm = decodeG711('alaw', encoded, new Int16Array(160));
  expect(Math.max(...pcm.map((s, i) => Math.abs(s - frame[i]!)))).toBeLessThan(600);
  expect(() => encodeG711('mulaw', frame, new Uint8Array(10))).toThrow(RangeError);
});

test('silence is the code each law decodes closest to zero', () => {
  expect(Math.abs(decodeMulaw(Uint8Array.of(G711_SILENCE.mulaw))[0]!)).toBe(0);
  expect(Math.abs(decodeAlaw(Uint8Array.of(G711_SILENCE.alaw))[0]!)).toBe(8);
});
