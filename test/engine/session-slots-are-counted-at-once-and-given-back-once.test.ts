import { describe, expect, it } from 'vitest';
import { SlotPool, type Slot } from '../../server/engine/session-slots.ts';
import { TokenBucket } from '../../server/engine/token-bucket.ts';

describe('a slot pool', () => {
  it('counts a place the moment it is taken, per owner and in all, and a place released twice comes back once', () => {
    const pool = new SlotPool({ total: 3, perOwner: 2 });
    const a1 = pool.take('a') as Slot;
    const a2 = pool.take('a') as Slot;
    expect(pool.take('a')).toBe('owner_full');
    const b1 = pool.take('b') as Slot;
    expect(pool.take('b')).toBe('full');
    a1.release();
    a1.release();
    expect(a1.released).toBe(true);
    // One place came back, not two: b takes it, and then the pool is full again.
    expect(typeof pool.take('b')).toBe('object');
    expect(pool.take('c')).toBe('full');
    a2.release();
    b1.release();
    expect(typeof pool.take('a')).toBe('object');
    expect(typeof pool.take('a')).toBe('object');
  });

  it('says an owner is at its own limit before saying the pool is full', () => {
    const pool = new SlotPool({ total: 1, perOwner: 1 });
    pool.take('a');
    expect(pool.take('a')).toBe('owner_full');
    expect(pool.take('b')).toBe('full');
  });
});

describe('a token bucket', () => {
  it('gives its burst at once, then one token per 1/rate seconds, never more than the burst', () => {
    let now = 0;
    const bucket = new TokenBucket({ burst: 5, perSecond: 1, now: () => now });
    expect(Array.from({ length: 7 }, () => bucket.take())).toEqual([true, true, true, true, true, false, false]);
    now += 999;
    expect(bucket.take()).toBe(false);
    now += 1;
    expect(bucket.take()).toBe(true);
    expect(bucket.take()).toBe(false);
    now += 60_000;
    expect(Array.from({ length: 6 }, () => bucket.take()).filter(Boolean)).toHaveLength(5);
  });
});
