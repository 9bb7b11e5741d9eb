import { expect, test } from 'vitest';
import { FrameAssembler, concatPcm } from '../../server/audio/pcm.ts';

const ramp = (length: number, from = 0) => Int16Array.from({ length }, (_, i) => from + i);

test('chunks of any size come out as whole frames holding the same samples in order', () => {
  const input = ramp(5000);
  const assembler = new FrameAssembler(512);
  const frames: Int16Array[] = [];
  // ~100 ms WebSocket chunks of uneven sizes, a one-sample chunk and an empty one.
  let offset = 0;
  for (const size of [1600, 1, 0, 1599, 333, 1467]) {
    frames.push(...assembler.push(input.subarray(offset, offset + size)));
    offset += size;
  }
  expect(frames.every((frame) => frame.length === 512)).toBe(true);
  expect(frames).toHaveLength(Math.floor(5000 / 512));
  expect(concatPcm(frames)).toEqual(input.subarray(0, frames.length * 512));
  expect(assembler.bufferedSamples).toBe(5000 % 512);
});

test('frames that lie inside one chunk are views of it, not copies', () => {
  const chunk = ramp(1600);
  const [first, second] = new FrameAssembler(320).push(chunk);
  expect(first!.buffer).toBe(chunk.buffer);
  expect(second!.byteOffset).toBe(320 * 2);
});

test('a frame straddling two chunks survives the assembler reusing its buffer', () => {
  const assembler = new FrameAssembler(320);
  assembler.push(ramp(200));
  const [straddling] = assembler.push(ramp(300, 200));
  assembler.push(ramp(250, 500)); // refills the internal buffer
  expect(straddling).toEqual(ramp(320));
});

test('flush returns the tail padded with silence to a whole frame', () => {
  const assembler = new FrameAssembler(320);
  assembler.push(ramp(100, 1));
  const tail = assembler.flush();
  expect(tail?.length).toBe(320);
  expect(Array.from(tail!.subarray(98, 102))).toEqual([99, 100, 0, 0]);
  expect(assembler.flush()).toBeNull();
});
