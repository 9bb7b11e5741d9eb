// The flite pool: jobs go to the worker that is free, sentences the caller is waiting for go
// first, and an aborted job that is still queued never reaches a worker. The fake worker holds
// its thread for "slow N" ms and fills each result with the count of jobs it has received.
import { expect, test } from 'vitest';
import { isAbortError } from '../../server/providers/retry.ts';
import { FlitePool } from '../../server/providers/tts/flite.ts';
import { neverAborted, rejectionOf } from './support.ts';

const workerUrl = new URL('./fake-flite-worker.mjs', import.meta.url);

/** Runs a job and records when it finished, in order. */
function tracked(pool: FlitePool, order: string[], name: string, text: string, awaited: boolean, signal = neverAborted()) {
  const job = pool.run(text, 'slt', signal, awaited);
  job.then(() => order.push(name), () => order.push(`${name} failed`));
  return job;
}

test('a sentence goes to a free worker instead of waiting behind a busy one', async () => {
  const pool = new FlitePool({ workerUrl, workers: 2, promptWorker: false });
  try {
    await pool.warmUp();
    const order: string[] = [];
    const long = tracked(pool, order, 'long', 'slow 400', false);
    const short = tracked(pool, order, 'short', 'quick', false);
    await Promise.all([long, short]);
    expect(order).toEqual(['short', 'long']);
    // Each worker counted one job: they ran on two threads.
    expect((await long).samples[0]).toBe(1);
    expect((await short).samples[0]).toBe(1);
  } finally {
    await pool.close();
  }
});

test('an awaited sentence runs on the prompt worker while look-ahead work queues', async () => {
  const pool = new FlitePool({ workerUrl, workers: 1 });
  try {
    await pool.warmUp();
    const order: string[] = [];
    const jobs = [
      tracked(pool, order, 'ahead 1', 'slow 400', false),
      tracked(pool, order, 'ahead 2', 'next', false),
      tracked(pool, order, 'awaited', 'hello', true),
    ];
    await Promise.all(jobs);
    expect(order).toEqual(['awaited', 'ahead 1', 'ahead 2']);
  } finally {
    await pool.close();
  }
});

test('when every worker is busy, the worker that frees first takes the awaited sentence before queued look-ahead work', async () => {
  const pool = new FlitePool({ workerUrl, workers: 1 });
  try {
    await pool.warmUp();
    const order: string[] = [];
    // The look-ahead worker frees first (300 ms), while the prompt worker is busy until 900 ms.
    // It must take the awaited sentence, not the look-ahead one queued before it; had it taken
    // "ahead 2", "awaited 2" would wait for the prompt worker and finish ~600 ms after it. (Two
    // equally slow jobs made this a race between two free workers' quick jobs: it failed once
    // in a quiet run of the whole suite.)
    const jobs = [
      tracked(pool, order, 'awaited 1', 'slow 900', true),
      tracked(pool, order, 'ahead 1', 'slow 300', false),
      tracked(pool, order, 'ahead 2', 'later', false),
      tracked(pool, order, 'awaited 2', 'now', true),
    ];
    await Promise.all(jobs);
    expect(order).toEqual(['ahead 1', 'awaited 2', 'ahead 2', 'awaited 1']);
  } finally {
    await pool.close();
  }
});

test('a queued job that is aborted never reaches a worker', async () => {
  const pool = new FlitePool({ workerUrl, workers: 1, promptWorker: false });
  try {
    await pool.warmUp();
    const first = pool.run('slow 300', 'slt', neverAborted(), false);
    const waiting = new AbortController();
    const dropped = pool.run('never run', 'slt', waiting.signal, false);
    const third = pool.run('after', 'slt', neverAborted(), false);
    waiting.abort();
    expect(isAbortError(await rejectionOf(dropped))).toBe(true);
    expect((await first).samples[0]).toBe(1);
    expect((await third).samples[0]).toBe(2);
  } finally {
    await pool.close();
  }
});

test('closing the pool fails what is still queued', async () => {
  const pool = new FlitePool({ workerUrl, workers: 1, promptWorker: false });
  await pool.warmUp();
  const running = rejectionOf(pool.run('slow 300', 'slt', neverAborted(), false));
  const queued = rejectionOf(pool.run('queued', 'slt', neverAborted(), false));
  await pool.close();
  expect(String(await queued)).toMatch(/shut down/);
  expect(String(await running)).toMatch(/shut down/);
});
