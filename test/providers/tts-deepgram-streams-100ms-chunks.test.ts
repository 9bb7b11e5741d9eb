import { afterEach, beforeEach, expect, test } from 'vitest';
import { concatPcm } from '../../server/audio/pcm.ts';
import { createDeepgramTextToSpeech } from '../../server/providers/tts/deepgram.ts';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { speechLikeAudio } from '../fakes/synthetic-audio.ts';
import { collect, neverAborted } from './support.ts';

const SENTENCE = 'Thanks for waiting, your table for four is booked for eight tonight.';
let fake: FakeDeepgram;
beforeEach(async () => {
  fake = await startFakeDeepgram({ apiKey: 'dg-key' });
});
afterEach(() => fake.close());

test('a sentence comes back as the exact 16 kHz speech, in 100 ms chunks with a shorter last one', async () => {
  // Paced, so each odd-sized network chunk arrives on its own and splits a sample.
  fake.setSpeakFault({ chunkDelayMs: 5 });
  const tts = createDeepgramTextToSpeech({ apiKey: 'dg-key', baseUrl: fake.url });
  const chunks = await collect(tts.synthesize(SENTENCE, neverAborted()));
  // Twelve words at 60 ms: 720 ms, so seven full chunks and a 20 ms tail.
  expect(chunks.map((c) => c.length)).toEqual([1600, 1600, 1600, 1600, 1600, 1600, 1600, 320]);
  expect(concatPcm(chunks)).toEqual(speechLikeAudio(SENTENCE, 16_000));
});

test('the request asks Aura for raw linear16 at 16 kHz with the Token key', async () => {
  const tts = createDeepgramTextToSpeech({ apiKey: 'dg-key', baseUrl: fake.url, model: 'aura-2-orion-en' });
  await collect(tts.synthesize('Hello.', neverAborted()));
  const request = fake.requests[0]!;
  expect(request.path).toBe('/v1/speak');
  expect(request.query).toEqual({ model: 'aura-2-orion-en', encoding: 'linear16', sample_rate: '16000', container: 'none' });
  expect(request.headers.authorization).toBe('Token dg-key');
  expect(request.body).toEqual({ text: 'Hello.' });
});
