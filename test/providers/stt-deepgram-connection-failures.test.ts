import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import { ProviderError, type TranscriptionStream } from '../../server/providers/types.ts';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { concatPcm, silence, toneBurst } from '../fakes/synthetic-audio.ts';
import { neverAborted, rejectionOf } from './support.ts';

const RATE = 16_000;
let fake: FakeDeepgram;
let stream: TranscriptionStream;
beforeEach(async () => {
  fake = await startFakeDeepgram({ apiKey: 'dg-right', transcripts: ['Got it.'] });
});
afterEach(async () => {
  stream.close();
  await fake.close();
});

const open = (apiKey = 'dg-right') => {
  stream = createDeepgramSpeechToText({ apiKey, baseUrl: fake.url, timeoutMs: 3_000 }).open({ language: 'en' });
  return stream;
};
const speech = () => concatPcm([toneBurst(400, RATE), silence(100, RATE)]);
const upgrades = () => fake.requests.filter((r) => r.path === '/v1/listen');

test('a refused key fails the turn as an auth error after a single attempt', async () => {
  open('dg-wrong').write(speech());
  const error = await rejectionOf(stream.flush(neverAborted()));
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ kind: 'auth', retryable: false });
  expect(upgrades()).toHaveLength(1);
});

test('an upgrade refused once with 503 is retried and the turn is transcribed', async () => {
  fake.setListenFault({ refuseStatus: 503, times: 1 });
  open().write(speech());
  expect(await stream.flush(neverAborted())).toBe('Got it.');
  expect(upgrades()).toHaveLength(2);
});

test('an upgrade refused twice with 500 fails as a server error', async () => {
  fake.setListenFault({ refuseStatus: 500 });
  open().write(speech());
  expect(await rejectionOf(stream.flush(neverAborted()))).toMatchObject({ kind: 'server' });
  expect(upgrades()).toHaveLength(2);
});

test('a turn right after a refused one tries again at once: the refusal is not reported twice', async () => {
  fake.setListenFault({ refuseStatus: 500 });
  open().write(speech());
  expect(await rejectionOf(stream.flush(neverAborted()))).toMatchObject({ kind: 'server' });
  // The caller speaks again well within a second, after the service has come back.
  fake.setListenFault(undefined);
  stream.write(speech());
  expect(await stream.flush(neverAborted())).toBe('Got it.');
});

test('messages that are not JSON fail the turn as a bad response', async () => {
  fake.setListenFault({ malformed: true });
  open().write(speech());
  expect(await rejectionOf(stream.flush(neverAborted()))).toMatchObject({ kind: 'bad_response' });
});

test('a connection Deepgram closes mid-turn fails that turn as a server error, and the next turn reconnects', async () => {
  fake.setListenFault({ closeAfterMs: 100, closeCode: 1011, times: 1 });
  open().write(toneBurst(300, RATE));
  await vi.waitFor(() => expect(fake.connections[0]?.closeCode).toBe(1011));
  expect(await rejectionOf(stream.flush(neverAborted()))).toMatchObject({ kind: 'server' });

  stream.write(speech());
  expect(await stream.flush(neverAborted())).toBe('Got it.');
  expect(fake.connections).toHaveLength(2);
});

test('a drop while a flush waits rejects that flush at once, well before the timeout', async () => {
  fake.setListenFault({ silent: true, closeAfterMs: 200, closeCode: 1006, times: 1 });
  open().write(speech());
  const started = performance.now();
  expect(await rejectionOf(stream.flush(neverAborted()))).toMatchObject({ kind: 'network' });
  expect(performance.now() - started).toBeLessThan(2_000);
});

test('a connection that drops between turns costs nothing: the next turn reconnects and succeeds', async () => {
  fake.setListenFault({ closeAfterMs: 150, closeCode: 1011, times: 1 });
  open().write(silence(100, RATE));
  expect(await stream.flush(neverAborted())).toBe('');
  await vi.waitFor(() => expect(fake.connections[0]?.closeCode).toBe(1011));
  stream.write(speech());
  expect(await stream.flush(neverAborted())).toBe('Got it.');
});
