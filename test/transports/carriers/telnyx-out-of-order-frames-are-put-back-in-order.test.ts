import fc from 'fast-check';
import { expect, test } from 'vitest';
import { ReorderWindow } from '../../../server/transports/carriers/reorder-window.ts';
import { scaledRuns } from '../../support/property-runs.ts';

const feed = (window: ReorderWindow<number>, sequences: number[]) => sequences.flatMap((sequence) => window.push(sequence, sequence));

test('frames in order pass straight through', () => {
  expect(feed(new ReorderWindow(3), [1, 2, 3, 4])).toEqual([1, 2, 3, 4]);
});

test('a frame that arrives one or two places early waits for the ones before it', () => {
  const window = new ReorderWindow<number>(3);
  expect(window.push(1, 1)).toEqual([1]);
  expect(window.push(3, 3)).toEqual([]);
  expect(window.push(4, 4)).toEqual([]);
  expect(window.push(2, 2)).toEqual([2, 3, 4]);
  expect(window.lost).toBe(0);
});

test('a frame that never comes is given up once the window is full, and counted lost', () => {
  const window = new ReorderWindow<number>(3);
  expect(feed(window, [1, 3, 4, 5])).toEqual([1]);
  expect(window.push(6, 6)).toEqual([3, 4, 5, 6]);
  expect(window.lost).toBe(1);
});

test('a frame that arrives after its turn was given up is dropped, as is a duplicate', () => {
  const window = new ReorderWindow<number>(2);
  expect(feed(window, [1, 3, 4, 5])).toEqual([1, 3, 4, 5]);
  expect(window.push(2, 2)).toEqual([]);
  expect(window.push(5, 5)).toEqual([]);
  expect(window.late).toBe(2);
});

test('the end of the stream releases whatever still waits, in order', () => {
  const window = new ReorderWindow<number>(3);
  feed(window, [1, 4, 3]);
  expect(window.flush()).toEqual([3, 4]);
});

test('frames shuffled within blocks of three all come out, in order, from the first one that arrived', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 60 }), fc.array(fc.constantFrom([0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]), { maxLength: 20 }), (count, shuffles) => {
      // No frame moves more than two places: what a window of three must absorb.
      const order: number[] = [];
      for (let block = 0; block * 3 < count; block++) {
        const members = [1, 2, 3].map((k) => block * 3 + k).filter((sequence) => sequence <= count);
        const shuffle = shuffles[block % Math.max(1, shuffles.length)] ?? [0, 1, 2];
        order.push(...shuffle.map((i) => members[i]).filter((sequence): sequence is number => sequence !== undefined));
      }
      const window = new ReorderWindow<number>(3);
      const out = [...order.flatMap((sequence) => window.push(sequence, sequence)), ...window.flush()];
      // The window starts where the stream's first frame says; any before it are late.
      const first = order[0]!;
      expect(out).toEqual(Array.from({ length: count - first + 1 }, (_, i) => first + i));
      expect(window.lost).toBe(0);
    }),
    { numRuns: scaledRuns(300) },
  );
});
