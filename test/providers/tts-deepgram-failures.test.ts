import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createDeepgramTextToSpeech } from '../../server/providers/tts/deepgram.ts';
import { ProviderError } from '../../server/providers/types.ts';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { collect, neverAborted, rejectionOf, totalSamples } from './support.ts';

const TIMEOUT_MS = 200;
const LONG = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen';
let fake: FakeDeepgram;
beforeEach(async () => {
  fake = await startFakeDeepgram({ apiKey: 'dg-key' });
});
afterEach(() => fake.close());

const speak = (text = 'Hello there.', apiKey = 'dg-key', signal = neverAborted(), timeoutMs = 5_000) =>
  createDeepgramTextToSpeech({ apiKey, baseUrl: fake.url, timeoutMs }).synthesize(text, signal);

test('a 500 before any audio is retried once and the sentence is still spoken', async () => {
  fake.setSpeakFault({ status: 500, times: 1 });
  expect(totalSamples(await collect(speak()))).toBeGreaterThan(0);
  expect(fake.requests).toHaveLength(2);
});

test('two 500s fail as a server error', async () => {
  fake.setSpeakFault({ status: 500 });
  const error = await rejectionOf(collect(speak()));
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ provider: 'deepgram', kind: 'server' });
  expect(fake.requests).toHaveLength(2);
});

test('a refused key fails as an auth error with no retry', async () => {
  const error = await rejectionOf(collect(speak('Hello there.', 'dg-wrong')));
  expect(error).toMatchObject({ kind: 'auth' });
  expect(fake.requests).toHaveLength(1);
});

test('a web page instead of audio fails as a bad response', async () => {
  fake.setSpeakFault({ garbage: true });
  expect(await rejectionOf(collect(speak()))).toMatchObject({ kind: 'bad_response' });
});

test('a server that never answers fails as a timeout after the retry, both requests hung up', async () => {
  fake.setSpeakFault({ hangMs: Infinity });
  const started = performance.now();
  expect(await rejectionOf(collect(speak('Hello there.', 'dg-key', neverAborted(), TIMEOUT_MS)))).toMatchObject({ kind: 'timeout' });
  expect(performance.now() - started).toBeLessThan(2 * TIMEOUT_MS + 1_000);
  await vi.waitFor(() => expect(fake.requests.map((r) => r.state)).toEqual(['aborted', 'aborted']));
});

test('a connection cut mid-sentence fails as a network error with no retry', async () => {
  fake.setSpeakFault({ dropAfterChunks: 3, chunkDelayMs: 20 });
  expect(await rejectionOf(collect(speak(LONG)))).toMatchObject({ kind: 'network' });
  expect(fake.requests).toHaveLength(1);
});

test('aborting mid-sentence stops with an AbortError and hangs up the request', async () => {
  fake.setSpeakFault({ chunkDelayMs: 50 });
  const controller = new AbortController();
  const error = await rejectionOf(
    (async () => {
      for await (const _ of speak(LONG, 'dg-key', controller.signal)) controller.abort();
    })(),
  );
  expect(error).not.toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ name: 'AbortError' });
  await vi.waitFor(() => expect(fake.requests[0]?.state).toBe('aborted'));
});
