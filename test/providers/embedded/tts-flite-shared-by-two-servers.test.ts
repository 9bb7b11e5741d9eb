// The process's flite workers are shared by every server in it (the desktop app's, a test's, a
// `voxflow test` run): one closing must not cut short a sentence another is speaking; the last to
// close stops them.
import { afterAll, expect, test } from 'vitest';
import { createFliteTts, holdFlite, shutdownFlite } from '../../../server/providers/tts/flite.ts';
import { collect, neverAborted, totalSamples } from '../support.ts';

afterAll(() => shutdownFlite());

const LONG = 'This sentence is long enough that flite is still speaking it when the other server closes, and it goes on for a while longer.';

test("one server closing leaves another's sentence whole; the last one closing stops the workers", async () => {
  const releaseFirst = holdFlite();
  const releaseSecond = holdFlite();
  // No sentence said from memory: the one cut below must be one the workers are running.
  const tts = createFliteTts({ cache: null });

  // The second server is speaking when the first closes.
  const speaking = collect(tts.synthesize(LONG, neverAborted()));
  await releaseFirst();
  await releaseFirst(); // closing twice lets go once
  const chunks = await speaking;
  expect(totalSamples(chunks) / 16_000).toBeGreaterThan(4);

  // The last holder closing stops the workers, and with them what they were saying.
  const cut = expect(collect(tts.synthesize(LONG, neverAborted()))).rejects.toThrow(/flite was shut down/);
  await releaseSecond();
  await cut;

  // A server started after that speaks again on fresh workers.
  const releaseThird = holdFlite();
  try {
    expect(totalSamples(await collect(tts.synthesize('Is it an animal?', neverAborted())))).toBeGreaterThan(8_000);
  } finally {
    await releaseThird();
  }
});
