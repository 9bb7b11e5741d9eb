// Which arm of an experiment a new session gets (docs/api.md#experiments): by weight, and the same
// caller id always the same arm of one experiment, while another experiment reshuffles callers.
import { describe, expect, it } from 'vitest';
import { callerIdOf, chooseArm } from '../../server/engine/experiment-arms.ts';

const arms = [
  { version: 3, weight: 90 },
  { version: 4, weight: 10 },
];

describe('experiment arms', () => {
  it('give a caller id the same arm every time, whatever else was drawn', () => {
    for (let i = 0; i < 50; i++) {
      const caller = `+1555000${i}`;
      const first = chooseArm('exp-a', arms, caller);
      for (let again = 0; again < 5; again++) expect(chooseArm('exp-a', arms, caller)).toBe(first);
    }
  });

  it('lay callers onto the weights: 90/10 over 10,000 callers, within 4σ', () => {
    let onThree = 0;
    for (let i = 0; i < 10_000; i++) if (chooseArm('exp-b', arms, `caller-${i}`) === 3) onThree++;
    // σ = √(10,000 · 0.9 · 0.1) = 30.
    expect(Math.abs(onThree - 9_000)).toBeLessThanOrEqual(120);
  });

  it('draw at random by weight without a caller id', () => {
    let onFour = 0;
    for (let i = 0; i < 10_000; i++) if (chooseArm('exp-c', arms, null) === 4) onFour++;
    expect(Math.abs(onFour - 1_000)).toBeLessThanOrEqual(120);
  });

  it('reshuffle callers in another experiment', () => {
    const even = [
      { version: 1, weight: 1 },
      { version: 2, weight: 1 },
    ];
    const callers = Array.from({ length: 200 }, (_, i) => `c${i}`);
    const moved = callers.filter((c) => chooseArm('exp-d', even, c) !== chooseArm('exp-e', even, c)).length;
    // Independent halves: about 100 of 200 change sides.
    expect(moved).toBeGreaterThan(60);
    expect(moved).toBeLessThan(140);
  });

  it('read a caller id from text or a number, and nothing else', () => {
    expect(callerIdOf(' +15550001111 ')).toBe('+15550001111');
    expect(callerIdOf(15550001111)).toBe('15550001111');
    expect(callerIdOf('')).toBeNull();
    expect(callerIdOf(undefined)).toBeNull();
    expect(callerIdOf({ id: 1 })).toBeNull();
  });
});
