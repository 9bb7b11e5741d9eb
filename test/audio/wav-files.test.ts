import { expect, test } from 'vitest';
import { WavFormatError, decodeWav, encodeWav } from '../../server/audio/pcm.ts';

const pcm = Int16Array.from({ length: 480 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));

/** A WAV with any header fields, for the formats we must refuse. */
function wav(fields: { format?: number; channels?: number; rate?: number; bits?: number; extraChunk?: boolean; data: Uint8Array }): Uint8Array {
  const { format = 1, channels = 1, rate = 16000, bits = 16, data } = fields;
  const extra = fields.extraChunk ? 8 + 3 + 1 : 0; // an odd-sized LIST chunk plus its pad byte
  const out = Buffer.alloc(44 + extra + data.length);
  out.write('RIFF', 0);
  out.writeUInt32LE(out.length - 8, 4);
  out.write('WAVEfmt ', 8);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(format, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE((rate * channels * bits) / 8, 28);
  out.writeUInt16LE((channels * bits) / 8, 32);
  out.writeUInt16LE(bits, 34);
  let at = 36;
  if (fields.extraChunk) {
    out.write('LIST', at);
    out.writeUInt32LE(3, at + 4);
    at += 12;
  }
  out.write('data', at);
  out.writeUInt32LE(data.length, at + 4);
  out.set(data, at + 8);
  return out;
}

test('a mono clip survives encoding and decoding unchanged', () => {
  const decoded = decodeWav(encodeWav(pcm, 24000));
  expect(decoded.sampleRate).toBe(24000);
  expect(decoded.pcm).toEqual(pcm);
});

test('stereo is averaged to mono', () => {
  const interleaved = new Int16Array([100, 300, -200, -400, 32767, 32767]);
  const decoded = decodeWav(wav({ channels: 2, rate: 48000, data: new Uint8Array(interleaved.buffer) }));
  expect(Array.from(decoded.pcm)).toEqual([200, -300, 32767]);
  expect(decoded.sampleRate).toBe(48000);
});

test('chunks before the audio, including odd-sized ones, are skipped', () => {
  const decoded = decodeWav(wav({ extraChunk: true, data: new Uint8Array(pcm.buffer) }));
  expect(decoded.pcm).toEqual(pcm);
});

test.each([
  ['float samples', { format: 3, bits: 32 }, /format 3/],
  ['8-bit samples', { bits: 8 }, /8-bit/],
  ['six channels', { channels: 6 }, /6 channels/],
])('%s are refused with a message saying what was found', (_name, fields, message) => {
  const decoding = () => decodeWav(wav({ ...fields, data: new Uint8Array(64) }));
  expect(decoding).toThrow(WavFormatError);
  expect(decoding).toThrow(message);
});

test('something that is not a WAV is refused', () => {
  expect(() => decodeWav(new TextEncoder().encode('ID3 this is an mp3'))).toThrow(/not a WAV/);
});
