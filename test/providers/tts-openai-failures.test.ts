import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createOpenAITextToSpeech } from '../../server/providers/tts/openai.ts';
import { ProviderError } from '../../server/providers/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { collect, neverAborted, rejectionOf, totalSamples } from './support.ts';

const TIMEOUT_MS = 200;
const LONG = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty';
let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test' });
});
afterEach(() => fake.close());

const speak = (text = 'Hello there.', apiKey = 'sk-test', signal = neverAborted(), timeoutMs = 5_000) =>
  createOpenAITextToSpeech({ apiKey, baseUrl: fake.url, timeoutMs }).synthesize(text, signal);

test('a 500 before any audio is retried once and the sentence is still spoken', async () => {
  fake.setSpeechFault({ status: 500, times: 1 });
  expect(totalSamples(await collect(speak()))).toBeGreaterThan(0);
  expect(fake.requests).toHaveLength(2);
});

test('two 500s fail as a server error', async () => {
  fake.setSpeechFault({ status: 500 });
  const error = await rejectionOf(collect(speak()));
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ kind: 'server' });
  expect(fake.requests).toHaveLength(2);
});

test('a refused key fails as an auth error with no retry', async () => {
  const error = await rejectionOf(collect(speak('Hello there.', 'sk-wrong')));
  expect(error).toMatchObject({ kind: 'auth' });
  expect(fake.requests).toHaveLength(1);
});

test('a web page instead of audio fails as a bad response rather than being played', async () => {
  fake.setSpeechFault({ garbage: true });
  const error = await rejectionOf(collect(speak()));
  expect(error).toMatchObject({ kind: 'bad_response' });
  expect(fake.requests).toHaveLength(1);
});

test('a server that never answers fails as a timeout after the retry', async () => {
  fake.setSpeechFault({ hangMs: Infinity });
  const started = performance.now();
  const error = await rejectionOf(collect(speak('Hello there.', 'sk-test', neverAborted(), TIMEOUT_MS)));
  expect(error).toMatchObject({ kind: 'timeout' });
  expect(performance.now() - started).toBeLessThan(2 * TIMEOUT_MS + 1_000);
  await vi.waitFor(() => expect(fake.requests.map((r) => r.state)).toEqual(['aborted', 'aborted']));
});

test('a connection cut mid-sentence fails as a network error after the audio so far, with no retry', async () => {
  fake.setSpeechFault({ dropAfterChunks: 3, chunkDelayMs: 20 });
  const received: Int16Array[] = [];
  const error = await rejectionOf(
    (async () => {
      for await (const pcm of speak(LONG)) received.push(pcm);
    })(),
  );
  expect(error).toMatchObject({ kind: 'network' });
  expect(totalSamples(received)).toBeGreaterThan(0);
  expect(fake.requests).toHaveLength(1);
});

test('aborting mid-sentence stops with an AbortError and hangs up the request', async () => {
  fake.setSpeechFault({ chunkDelayMs: 50 });
  const controller = new AbortController();
  const error = await rejectionOf(
    (async () => {
      for await (const _ of speak(LONG, 'sk-test', controller.signal)) controller.abort();
    })(),
  );
  expect(error).not.toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ name: 'AbortError' });
  await vi.waitFor(() => expect(fake.requests[0]?.state).toBe('aborted'));
});
