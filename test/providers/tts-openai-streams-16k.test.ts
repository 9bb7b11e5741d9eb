import { afterEach, beforeEach, expect, test } from 'vitest';
import { concatPcm } from '../../server/audio/pcm.ts';
import { resample } from '../../server/audio/resampler.ts';
import { createOpenAITextToSpeech } from '../../server/providers/tts/openai.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { rmsDbfs, speechLikeAudio } from '../fakes/synthetic-audio.ts';
import { collect, neverAborted, totalSamples } from './support.ts';

const SENTENCE = 'Your invoice has been paid, thank you for calling today.';
let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test' });
});
afterEach(() => fake.close());

const tts = () => createOpenAITextToSpeech({ apiKey: 'sk-test', baseUrl: fake.url });

test('a sentence comes back as several chunks of 16 kHz audio as long as the speech', async () => {
  const chunks = await collect(tts().synthesize(SENTENCE, neverAborted()));
  expect(chunks.length).toBeGreaterThan(2);
  // Ten words at 60 ms each.
  expect(totalSamples(chunks) / 16_000).toBeCloseTo(0.6, 2);
  expect(rmsDbfs(concatPcm(chunks))).toBeGreaterThan(-20);
});

test('network chunks that split samples in half still give exactly the resampled speech', async () => {
  // Paced, so each odd-sized network chunk arrives on its own.
  fake.setSpeechFault({ chunkDelayMs: 5 });
  const chunks = await collect(tts().synthesize(SENTENCE, neverAborted()));
  const expected = resample(speechLikeAudio(SENTENCE, 24_000), 24_000, 16_000);
  expect(concatPcm(chunks)).toEqual(expected);
});

test('the request asks for raw PCM with the configured model and voice', async () => {
  await collect(createOpenAITextToSpeech({ apiKey: 'sk-test', baseUrl: fake.url, model: 'tts-1', voice: 'nova' }).synthesize('Hi.', neverAborted()));
  expect(fake.requests[0]?.body).toEqual({ model: 'tts-1', voice: 'nova', input: 'Hi.', response_format: 'pcm' });
});

test('an empty sentence makes no request', async () => {
  expect(await collect(tts().synthesize('  ', neverAborted()))).toEqual([]);
  expect(fake.requests).toHaveLength(0);
});
