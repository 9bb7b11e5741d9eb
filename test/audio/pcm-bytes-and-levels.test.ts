import { expect, test } from 'vitest';
import { bytesFromInt16, dbfs, int16FromBytes, int16ToFloat32, rms } from '../../server/audio/pcm.ts';

test('wire bytes read as little-endian samples, as a view when aligned', () => {
  const wire = Buffer.from([0x01, 0x00, 0xff, 0x7f, 0x00, 0x80]);
  const pcm = int16FromBytes(wire)!;
  expect(Array.from(pcm)).toEqual([1, 32767, -32768]);
  expect(pcm.buffer).toBe(wire.buffer);
});

test('bytes at an odd offset inside a larger buffer still read correctly', () => {
  const backing = Buffer.from([0xaa, 0x02, 0x00, 0x03, 0x00, 0xbb]);
  const slice = backing.subarray(1, 5);
  expect(Array.from(int16FromBytes(slice)!)).toEqual([2, 3]);
});

test('an odd number of bytes is reported, not guessed at', () => {
  expect(int16FromBytes(Buffer.alloc(641))).toBeNull();
});

test('samples turn back into their own bytes without a copy', () => {
  const pcm = new Int16Array([0, 258, -1, 7]).subarray(1, 3);
  const bytes = bytesFromInt16(pcm);
  expect([...bytes]).toEqual([0x02, 0x01, 0xff, 0xff]);
  expect(bytes.buffer).toBe(pcm.buffer);
});

test('conversion to float reuses the caller’s buffer', () => {
  const reusable = new Float32Array(4);
  const out = int16ToFloat32(new Int16Array([16384, -32768]), reusable);
  expect(Array.from(out)).toEqual([0.5, -1]);
  expect(out.buffer).toBe(reusable.buffer);
});

test('a full-scale square wave is 0 dBFS, half scale -6 dBFS, silence -Infinity', () => {
  const square = Int16Array.from({ length: 100 }, (_, i) => (i % 2 ? 32767 : -32768));
  expect(dbfs(square)).toBeCloseTo(0, 2);
  expect(dbfs(square.map((s) => s >> 1))).toBeCloseTo(-6.02, 1);
  expect(rms(new Int16Array(10))).toBe(0);
  expect(dbfs(new Int16Array(10))).toBe(-Infinity);
});
