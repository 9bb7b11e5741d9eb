import { expect, test } from 'vitest';
import { FliteWorkerHost, createFliteTts } from '../../../server/providers/tts/flite.ts';
import { ProviderError } from '../../../server/providers/types.ts';
import { collect, neverAborted, rejectionOf } from '../support.ts';

test('a worker crash fails the running and the queued jobs, and the next call gets a fresh worker', async () => {
  const host = new FliteWorkerHost({ workerUrl: new URL('../fake-flite-worker.mjs', import.meta.url) });
  const tts = createFliteTts({ host });
  try {
    const crashing = collect(tts.synthesize('Please crash now.', neverAborted()));
    const queued = collect(tts.synthesize('I was waiting.', neverAborted()));
    for (const error of [await rejectionOf(crashing), await rejectionOf(queued)]) {
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ provider: 'flite', kind: 'server' });
    }
    const after = await collect(tts.synthesize('Hello again.', neverAborted()));
    expect(after[0]![0]).toBe(1); // the first job of a new worker
  } finally {
    await host.close();
  }
});
