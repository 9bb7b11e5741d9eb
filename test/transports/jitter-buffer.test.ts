import { describe, expect, it } from 'vitest';
import { JitterBuffer } from '../../server/transports/webrtc/jitter-buffer.ts';

function run(sequence: number[], maxDelay = 3): Array<number | null> {
  const out: Array<number | null> = [];
  const buffer = new JitterBuffer<number>((packet) => out.push(packet), maxDelay);
  for (const seq of sequence) buffer.push(seq, seq);
  return out;
}

describe('the 60 ms reorder buffer', () => {
  it('passes packets in order straight through', () => {
    expect(run([1, 2, 3, 4])).toEqual([1, 2, 3, 4]);
  });

  it('puts a packet that arrives one or two late back in its place', () => {
    expect(run([1, 3, 2, 4])).toEqual([1, 2, 3, 4]);
    expect(run([1, 3, 4, 2, 5])).toEqual([1, 2, 3, 4, 5]);
  });

  it('gives up on a packet once three later ones wait, reports it lost, and drops it if it comes after all', () => {
    expect(run([10, 11, 13, 14, 15, 16, 12])).toEqual([10, 11, null, 13, 14, 15, 16]);
  });

  it('drops duplicates and follows the sequence number across its 16-bit wrap', () => {
    expect(run([65534, 65535, 65535, 0, 1])).toEqual([65534, 65535, 0, 1]);
  });

  it('starts over when the sender jumps far ahead (a restarted stream)', () => {
    expect(run([5, 6, 40_000, 40_001])).toEqual([5, 6, 40_000, 40_001]);
  });
});
