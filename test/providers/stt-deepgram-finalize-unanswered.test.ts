import { afterEach, expect, test, vi } from 'vitest';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import { ProviderError, type TranscriptionStream } from '../../server/providers/types.ts';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { concatPcm, silence, toneBurst } from '../fakes/synthetic-audio.ts';
import { neverAborted, rejectionOf } from './support.ts';

const RATE = 16_000;
let fake: FakeDeepgram;
let stream: TranscriptionStream;
afterEach(async () => {
  stream.close();
  await fake.close();
});

test('a server that never answers the Finalize fails the flush as a timeout within the configured time', async () => {
  fake = await startFakeDeepgram({ listen: { silent: true } });
  stream = createDeepgramSpeechToText({ apiKey: 'k', baseUrl: fake.url, timeoutMs: 500 }).open({ language: 'en' });
  stream.write(toneBurst(500, RATE));
  const started = performance.now();
  const error = await rejectionOf(stream.flush(neverAborted()));
  const elapsed = performance.now() - started;
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ kind: 'timeout' });
  expect(elapsed).toBeGreaterThanOrEqual(480);
  expect(elapsed).toBeLessThan(1_500);
});

test('when Deepgram already finalised the utterance and stays quiet after Finalize, the flush settles after the grace period', async () => {
  fake = await startFakeDeepgram({ transcripts: ['All done.'], answerIdleFinalize: false });
  stream = createDeepgramSpeechToText({ apiKey: 'k', baseUrl: fake.url, timeoutMs: 3_000, finalizeGraceMs: 200 }).open({ language: 'en' });
  // Enough silence for the server's endpointing to send speech_final on its own.
  stream.write(concatPcm([toneBurst(500, RATE), silence(500, RATE)]));
  // The server's own final has gone out (on a loaded machine that can take longer than the
  // audio), and a moment more lets it arrive over loopback before the flush.
  await vi.waitFor(() => expect(fake.connections[0]?.sent.some((m) => (m as { speech_final?: boolean }).speech_final)).toBe(true), { timeout: 5_000 });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = performance.now();
  expect(await stream.flush(neverAborted())).toBe('All done.');
  const elapsed = performance.now() - started;
  expect(elapsed).toBeGreaterThanOrEqual(190);
  expect(elapsed).toBeLessThan(2_000);
});
