import { readFileSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { createFliteTts, shutdownFlite } from '../../../server/providers/tts/flite.ts';
import { busiestThread, threads } from '../../support/threads.ts';
import { collect, neverAborted } from '../support.ts';

afterAll(() => shutdownFlite());

const SENTENCES = [
  'Welcome back to the guessing game.',
  'I am thinking of something you can find in a kitchen.',
  'Is it an animal?',
  'No, it is not an animal.',
  'Can you eat it?',
  'Yes, you can eat it, but most people cook it first.',
  'Is it a potato?',
  'That is right, it is a potato!',
  'Would you like to play again?',
  'Thanks for playing, goodbye.',
];

/** CPU time this thread has run, in ms (Linux schedstat: exact, whatever else the machine does). */
function threadCpuMs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
}

/** CPU time of every thread of the process, in ms. */
function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

// Measured as CPU time, not timer lag: on a loaded 2-core machine the OS alone can keep the
// thread off the CPU for tens of milliseconds while other test files run, which says nothing
// about flite. Synthesis on the main thread would put nearly all the work there.
// The sentences run in flite each time (cache: null): these tests are about where flite's work runs.
test('ten sentences are synthesized on another thread: the main thread does under a fifth of the work', async () => {
  const tts = createFliteTts({ cache: null });
  // Starting a process's first worker thread costs the main thread ~15-35 ms once; the server
  // pays that at start-up (warmUp), not during a call.
  await tts.warmUp();
  const mainBefore = threadCpuMs();
  const allBefore = processCpuMs();
  let samples = 0;
  for (const sentence of SENTENCES) for (const chunk of await collect(tts.synthesize(sentence, neverAborted()))) samples += chunk.length;
  const main = threadCpuMs() - mainBefore;
  const all = processCpuMs() - allBefore;
  expect(samples / 16_000).toBeGreaterThan(10); // the work really happened
  expect(main / all, `main thread ${main.toFixed(1)} ms of ${all.toFixed(1)} ms CPU`).toBeLessThan(0.2);
});

// Under load the main thread must win the CPU: it paces every caller's audio frame, while
// look-ahead synthesis runs ahead of playback and can wait. A sentence the caller is waiting for
// (nothing left to play before it) must not wait behind other processes, though.
test('look-ahead synthesis runs on a thread that yields to the main thread (nice 10 against the process’s own)', async () => {
  const tts = createFliteTts({ cache: null });
  await tts.warmUp();
  const before = threads();
  for (const sentence of SENTENCES.slice(0, 4)) await collect(tts.synthesize(sentence, neverAborted(), { aheadMs: 2_000 }));
  const busiest = busiestThread(before, threads());
  const main = threads().find((t) => t.tid === process.pid)!;
  expect(busiest.tid).not.toBe(process.pid);
  expect(busiest.usedMs).toBeGreaterThan(20); // it is the thread that synthesized
  expect(busiest.nice).toBe(main.nice + 10);
});

test('a sentence the caller is waiting for runs on a thread at the process’s own priority', async () => {
  const tts = createFliteTts({ cache: null });
  await tts.warmUp();
  const before = threads();
  for (const sentence of SENTENCES.slice(4, 8)) await collect(tts.synthesize(sentence, neverAborted(), { aheadMs: 0 }));
  const busiest = busiestThread(before, threads());
  const main = threads().find((t) => t.tid === process.pid)!;
  expect(busiest.tid).not.toBe(process.pid);
  expect(busiest.usedMs).toBeGreaterThan(20);
  expect(busiest.nice).toBe(main.nice);
});
