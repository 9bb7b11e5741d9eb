import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import { ProviderError, type TranscriptionStream } from '../../server/providers/types.ts';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { toneBurst } from '../fakes/synthetic-audio.ts';
import { neverAborted, rejectionOf } from './support.ts';

const RATE = 16_000;
let fake: FakeDeepgram;
let stream: TranscriptionStream;
beforeEach(async () => {
  fake = await startFakeDeepgram({ listen: { silent: true } });
  stream = createDeepgramSpeechToText({ apiKey: 'k', baseUrl: fake.url, keepAliveMs: 150, timeoutMs: 5_000 }).open({ language: 'en' });
});
afterEach(async () => {
  stream.close();
  await fake.close();
});

const keepAlives = () => fake.connections[0]?.received.filter((m) => m.type === 'KeepAlive').length ?? 0;

test('an idle connection is kept alive, a busy one is not', async () => {
  const frame = toneBurst(20, RATE);
  const busy = setInterval(() => stream.write(frame), 20);
  await new Promise((resolve) => setTimeout(resolve, 250));
  clearInterval(busy);
  expect(keepAlives()).toBe(0);
  await vi.waitFor(() => expect(keepAlives()).toBeGreaterThanOrEqual(2), { timeout: 2_000 });
});

test('aborting a waiting flush rejects with an AbortError, not a provider failure', async () => {
  stream.write(toneBurst(300, RATE));
  const controller = new AbortController();
  const flushed = stream.flush(controller.signal);
  await vi.waitFor(() => expect(fake.connections[0]?.received.map((m) => m.type)).toContain('Finalize'));
  controller.abort();
  const error = await rejectionOf(flushed);
  expect(error).not.toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ name: 'AbortError' });
});

test('closing the stream while a flush waits ends the flush quietly and the socket with 1000', async () => {
  stream.write(toneBurst(300, RATE));
  const flushed = stream.flush(neverAborted());
  await vi.waitFor(() => expect(fake.connections[0]?.received.map((m) => m.type)).toContain('Finalize'));
  stream.close();
  expect(await rejectionOf(flushed)).toMatchObject({ name: 'AbortError' });
  await vi.waitFor(() => expect(fake.connections[0]?.closeCode).toBe(1000));
  expect(await stream.flush(neverAborted())).toBe('');
});
