// A sentence flite has said is said again from memory: a flow's greeting or phone menu, the same
// words every call, runs flite once. The fake worker's samples count the jobs it received, so the
// audio itself says whether a sentence reached the worker.
import { afterAll, expect, test } from 'vitest';
import { concatPcm } from '../../server/audio/pcm.ts';
import { FliteSpeechCache, FliteWorkerHost, createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { collect, neverAborted } from './support.ts';

afterAll(() => shutdownFlite());

const fakeWorker = new URL('./fake-flite-worker.mjs', import.meta.url);
/** One fake sentence: 3,200 samples of 16-bit audio. */
const SENTENCE_BYTES = 6_400;

async function withHost(run: (host: FliteWorkerHost) => Promise<void>): Promise<void> {
  const host = new FliteWorkerHost({ workerUrl: fakeWorker });
  try {
    await run(host);
  } finally {
    await host.close();
  }
}

test('a sentence said before is said again without running flite, in the same voice only', async () => {
  await withHost(async (host) => {
    const tts = createFliteTts({ host, cache: new FliteSpeechCache() });
    const say = async (text: string, voice?: string) => concatPcm(await collect(tts.synthesize(text, neverAborted(), voice ? { aheadMs: 0, voice } : undefined)));
    const greeting = await say('Press 1 for your account, or 0 for the front desk.');
    expect(greeting[0]).toBe(1);
    expect(await say('Press 1 for your account, or 0 for the front desk.')).toEqual(greeting);
    // Another sentence, and the same one in another voice, each still reach the worker.
    expect((await say('Please hold while I connect you.'))[0]).toBe(2);
    expect((await say('Press 1 for your account, or 0 for the front desk.', 'kal16'))[0]).toBe(3);
  });
});

test('the cache keeps the last-used sentences within its size, and a sentence too big for it is not kept', async () => {
  await withHost(async (host) => {
    const cache = new FliteSpeechCache(2 * SENTENCE_BYTES);
    const tts = createFliteTts({ host, cache });
    const say = async (text: string) => (await collect(tts.synthesize(text, neverAborted())))[0]![0];
    expect([await say('one'), await say('two')]).toEqual([1, 2]);
    expect(await say('one')).toBe(1); // from memory, and now the last used
    expect(await say('three')).toBe(3); // pushes out "two", used longest ago
    expect(cache.size).toBe(2 * SENTENCE_BYTES);
    expect(await say('one')).toBe(1);
    expect(await say('two')).toBe(4);

    const small = new FliteSpeechCache(SENTENCE_BYTES - 1);
    const uncached = createFliteTts({ host, cache: small });
    expect((await collect(uncached.synthesize('four', neverAborted())))[0]![0]).toBe(5);
    expect((await collect(uncached.synthesize('four', neverAborted())))[0]![0]).toBe(6);
    expect(small.size).toBe(0);
  });
});

test('a listener that changes the audio it was given does not change what the next caller hears', async () => {
  await withHost(async (host) => {
    const tts = createFliteTts({ host, cache: new FliteSpeechCache() });
    for (const chunk of await collect(tts.synthesize('Connecting you.', neverAborted()))) chunk.fill(0);
    const again = concatPcm(await collect(tts.synthesize('Connecting you.', neverAborted())));
    expect(again.every((sample) => sample === 1)).toBe(true);
    for (const chunk of await collect(tts.synthesize('Connecting you.', neverAborted()))) chunk.fill(0);
    expect(concatPcm(await collect(tts.synthesize('Connecting you.', neverAborted()))).every((sample) => sample === 1)).toBe(true);
  });
});

test('a provider on a host of its own keeps no sentences unless given a cache: its runs are flite’s', async () => {
  await withHost(async (host) => {
    const tts = createFliteTts({ host });
    expect((await collect(tts.synthesize('Connecting you.', neverAborted())))[0]![0]).toBe(1);
    expect((await collect(tts.synthesize('Connecting you.', neverAborted())))[0]![0]).toBe(2);
  });
});

test("one account's kept sentences are never another's: each account's first saying runs flite", async () => {
  await withHost(async (host) => {
    const flite = createFliteTts({ host, cache: new FliteSpeechCache() });
    const first = async (tts: { synthesize: typeof flite.synthesize }, text: string) => (await collect(tts.synthesize(text, neverAborted())))[0]![0];
    const alice = flite.forAccount('acct_alice');
    const bob = flite.forAccount('acct_bob');
    expect(await first(alice, 'Your appointment is at three.')).toBe(1);
    expect(await first(alice, 'Your appointment is at three.')).toBe(1);
    // Bob's call saying the same words gets flite's own run, not Alice's kept audio, so how fast it
    // comes tells Bob nothing about Alice's calls; and each keeps its own from then on.
    expect(await first(bob, 'Your appointment is at three.')).toBe(2);
    expect(await first(bob, 'Your appointment is at three.')).toBe(2);
    expect(await first(flite.forAccount('acct_alice'), 'Your appointment is at three.')).toBe(1);
  });
});
