import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOpenAISpeechToText } from '../../server/providers/stt/openai.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { concatPcm, silence, toneBurst } from '../fakes/synthetic-audio.ts';
import { neverAborted } from './support.ts';

const RATE = 16_000;
let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test', transcripts: ['I want to pay my invoice.', 'Yes, that is right.'] });
});
afterEach(() => fake.close());

const stt = () => createOpenAISpeechToText({ apiKey: 'sk-test', baseUrl: fake.url });

/** A turn as the engine writes it: 20 ms frames, speech with silence around it. */
function writeTurn(stream: { write(pcm: Int16Array): void }, speechMs: number): void {
  const turn = concatPcm([silence(200, RATE), toneBurst(speechMs, RATE), silence(500, RATE)]);
  for (let at = 0; at < turn.length; at += 320) stream.write(turn.subarray(at, at + 320));
}

test('each turn is transcribed as one request and returns the next transcript', async () => {
  const stream = stt().open({ language: 'en-US' });
  writeTurn(stream, 900);
  expect(await stream.flush(neverAborted())).toBe('I want to pay my invoice.');
  writeTurn(stream, 400);
  expect(await stream.flush(neverAborted())).toBe('Yes, that is right.');
  expect(fake.requests).toHaveLength(2);
});

test('the request carries the model, the language as Whisper wants it and the turn as a 16 kHz WAV', async () => {
  const stream = stt().open({ language: 'en-US' });
  writeTurn(stream, 900);
  await stream.flush(neverAborted());
  const request = fake.requests[0]!;
  expect(request.path).toBe('/v1/audio/transcriptions');
  expect(request.headers.authorization).toBe('Bearer sk-test');
  expect(request.body).toMatchObject({
    model: 'whisper-1',
    language: 'en',
    file: { name: 'turn.wav', type: 'audio/wav' },
    audio: { sampleRate: RATE, channels: 1, durationMs: 1600 },
  });
});

test('a flush with nothing written returns empty text without a request', async () => {
  const stream = stt().open({ language: 'en' });
  expect(await stream.flush(neverAborted())).toBe('');
  expect(fake.requests).toHaveLength(0);
});

test('a turn of silence comes back empty and leaves the queued transcript for real speech', async () => {
  const stream = stt().open({ language: 'en' });
  stream.write(silence(800, RATE));
  expect(await stream.flush(neverAborted())).toBe('');
  writeTurn(stream, 600);
  expect(await stream.flush(neverAborted())).toBe('I want to pay my invoice.');
});
