import { readFileSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { collect, neverAborted } from './support.ts';

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

/** ms this thread has spent waiting for a CPU (Linux): time other threads had the cores. */
function runQueueWaitMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

// Only the gap our own process causes counts: on a loaded 2-core machine the OS alone can keep
// the thread off the CPU for 20 ms while other test files run, which says nothing about flite.
test('while ten sentences are synthesized, a 5 ms timer on the main thread never waits 15 ms', async () => {
  const tts = createFliteTts();
  // Starting a process's first worker thread costs the main thread ~15-35 ms once; the server
  // pays that at start-up (warmUp), not during a call.
  await tts.warmUp();
  let last = performance.now();
  let lastWait = runQueueWaitMs();
  let maxGap = 0;
  let rawMaxGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const wait = runQueueWaitMs();
    rawMaxGap = Math.max(rawMaxGap, now - last);
    maxGap = Math.max(maxGap, now - last - (wait - lastWait));
    last = now;
    lastWait = wait;
  }, 5);
  let samples = 0;
  try {
    for (const sentence of SENTENCES) for (const chunk of await collect(tts.synthesize(sentence, neverAborted()))) samples += chunk.length;
  } finally {
    clearInterval(timer);
  }
  expect(samples / 16_000).toBeGreaterThan(10); // the work really happened
  expect(maxGap, `longest gap ${maxGap.toFixed(1)} ms; ${rawMaxGap.toFixed(1)} ms counting time other threads held the CPUs`).toBeLessThan(15);
});
