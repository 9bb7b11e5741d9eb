import { afterAll, expect, test } from 'vitest';
import { concatPcm, dbfs } from '../../../server/audio/pcm.ts';
import { FliteWorkerHost, createFliteTts, shutdownFlite } from '../../../server/providers/tts/flite.ts';
import { collect, neverAborted, totalSamples } from '../support.ts';

afterAll(() => shutdownFlite());

test('a sentence becomes 16 kHz speech of plausible length and level, in 100 ms chunks', async () => {
  const chunks = await collect(createFliteTts({ cache: null }).synthesize('My secret thing is a cat, can you guess what it is?', neverAborted()));
  const seconds = totalSamples(chunks) / 16_000;
  expect(seconds).toBeGreaterThan(1.5);
  expect(seconds).toBeLessThan(5);
  const level = dbfs(concatPcm(chunks));
  expect(level).toBeGreaterThan(-30);
  expect(level).toBeLessThan(-6);
  expect(chunks.slice(0, -1).every((chunk) => chunk.length === 1600)).toBe(true);
  expect(chunks.at(-1)!.length).toBeLessThanOrEqual(1600);
});

test.each(['', '   ', '😀 🎉', '***'])('text with nothing speakable (%j) yields no audio', async (text) => {
  expect(await collect(createFliteTts().synthesize(text, neverAborted()))).toEqual([]);
});

test('an 8 kHz voice is delivered at 16 kHz', async () => {
  const host = new FliteWorkerHost();
  try {
    const raw = await host.run('Is it an animal?', 'kal', neverAborted());
    expect(raw.sampleRate).toBe(8000);
    const chunks = await collect(createFliteTts({ voice: 'kal', host }).synthesize('Is it an animal?', neverAborted()));
    expect(totalSamples(chunks)).toBe(raw.samples.length * 2);
  } finally {
    await host.close();
  }
});

test('an unknown voice is refused when the provider is created, not on the first sentence', () => {
  expect(() => createFliteTts({ voice: 'hal9000' as never })).toThrow(/no voice "hal9000"/);
});
