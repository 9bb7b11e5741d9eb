import { afterEach, expect, it, vi } from 'vitest';
import { SessionLimits, type LimitReason } from '../../server/engine/session-limits.ts';

// The limits alone, on the fake clock: activity in → the end they ask for out.
afterEach(() => void vi.useRealTimers());

function limits(options: { maxDurationMs?: number; idleEndMs?: number }) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  const ends: LimitReason[] = [];
  let ended = false;
  const stage = new SessionLimits(options, () => ended, (reason) => {
    ends.push(reason);
    ended = true;
  });
  return { stage, ends, run: (ms: number) => vi.advanceTimersByTime(ms) };
}

it('ends a session at its longest duration, however lively it is', () => {
  const l = limits({ maxDurationMs: 60_000 });
  l.stage.watch();
  for (let t = 0; t < 59; t++) {
    l.run(1_000);
    l.stage.noteActivity();
  }
  expect(l.ends).toEqual([]);
  l.run(1_000);
  expect(l.ends).toEqual(['max_duration']);
});

it('ends a session nobody speaks in, counting from the last activity', () => {
  const l = limits({ idleEndMs: 10_000 });
  l.stage.watch();
  l.run(8_000);
  l.stage.noteActivity();
  l.run(9_000);
  expect(l.ends).toEqual([]);
  l.run(1_000);
  expect(l.ends).toEqual(['idle']);
});

it('asks for nothing once stopped, or when no limit is set', () => {
  const stopped = limits({ maxDurationMs: 1_000, idleEndMs: 1_000 });
  stopped.stage.watch();
  stopped.stage.stop();
  stopped.run(5_000);
  expect(stopped.ends).toEqual([]);

  const unlimited = limits({});
  unlimited.stage.watch();
  unlimited.run(3_600_000);
  expect(unlimited.ends).toEqual([]);
});
