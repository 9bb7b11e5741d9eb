import { afterAll, expect, test } from 'vitest';
import { isAbortError } from '../../server/providers/retry.ts';
import { FliteWorkerHost, createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { collect, neverAborted, rejectionOf } from './support.ts';

afterAll(() => shutdownFlite());

const fakeWorker = new URL('./fake-flite-worker.mjs', import.meta.url);

test('an already aborted call yields nothing and ends with an AbortError', async () => {
  const chunks: Int16Array[] = [];
  const error = await rejectionOf((async () => {
    for await (const chunk of createFliteTts().synthesize('Is it an animal?', AbortSignal.abort())) chunks.push(chunk);
  })());
  expect(isAbortError(error)).toBe(true);
  expect(chunks).toEqual([]);
});

test('a job aborted while waiting its turn is dropped before it reaches the worker', async () => {
  const host = new FliteWorkerHost({ workerUrl: fakeWorker });
  const tts = createFliteTts({ host });
  try {
    const first = collect(tts.synthesize('slow 200', neverAborted()));
    const waiting = new AbortController();
    const dropped = collect(tts.synthesize('never run', waiting.signal));
    const third = collect(tts.synthesize('after', neverAborted()));
    waiting.abort();
    expect(isAbortError(await rejectionOf(dropped))).toBe(true);
    expect((await first)[0]![0]).toBe(1);
    // Every sample counts the jobs the worker received: the aborted one never arrived.
    expect((await third)[0]![0]).toBe(2);
  } finally {
    await host.close();
  }
});

test('aborting a job the worker is running ends the call at once, and its late result goes nowhere', async () => {
  const host = new FliteWorkerHost({ workerUrl: fakeWorker });
  const tts = createFliteTts({ host });
  try {
    await tts.warmUp();
    const running = new AbortController();
    const started = performance.now();
    const aborted = collect(tts.synthesize('slow 300', running.signal));
    setTimeout(() => running.abort(), 30);
    expect(isAbortError(await rejectionOf(aborted))).toBe(true);
    expect(performance.now() - started).toBeLessThan(250);
    const next = await collect(tts.synthesize('next', neverAborted()));
    expect(next[0]![0]).toBe(2); // its own result, not the aborted job's
  } finally {
    await host.close();
  }
});
