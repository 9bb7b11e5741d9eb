import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createOpenAISpeechToText } from '../../server/providers/stt/openai.ts';
import { ProviderError, type TranscriptionStream } from '../../server/providers/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { toneBurst } from '../fakes/synthetic-audio.ts';
import { neverAborted, rejectionOf } from './support.ts';

const TIMEOUT_MS = 200;
let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test', transcripts: ['Hello there.'] });
});
afterEach(() => fake.close());

function spokenTurn(apiKey = 'sk-test', timeoutMs = 5_000): TranscriptionStream {
  const stream = createOpenAISpeechToText({ apiKey, baseUrl: fake.url, timeoutMs }).open({ language: 'en' });
  stream.write(toneBurst(600, 16_000));
  return stream;
}

test('a 500 is retried once and the turn is still transcribed', async () => {
  fake.setTranscriptionFault({ status: 500, times: 1 });
  expect(await spokenTurn().flush(neverAborted())).toBe('Hello there.');
  expect(fake.requests).toHaveLength(2);
});

test('two 500s fail the turn as a server error', async () => {
  fake.setTranscriptionFault({ status: 500 });
  const error = await rejectionOf(spokenTurn().flush(neverAborted()));
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ kind: 'server' });
  expect(fake.requests).toHaveLength(2);
});

test('a refused key fails as an auth error with no retry', async () => {
  const error = await rejectionOf(spokenTurn('sk-wrong').flush(neverAborted()));
  expect(error).toMatchObject({ kind: 'auth', retryable: false });
  expect(fake.requests).toHaveLength(1);
});

test('a malformed JSON answer fails as a bad response', async () => {
  fake.setTranscriptionFault({ garbage: true });
  const error = await rejectionOf(spokenTurn().flush(neverAborted()));
  expect(error).toMatchObject({ kind: 'bad_response' });
  expect(fake.requests).toHaveLength(1);
});

test('a server that never answers fails as a timeout, not a hung turn', async () => {
  fake.setTranscriptionFault({ hangMs: Infinity });
  const started = performance.now();
  const error = await rejectionOf(spokenTurn('sk-test', TIMEOUT_MS).flush(neverAborted()));
  expect(error).toMatchObject({ kind: 'timeout' });
  expect(performance.now() - started).toBeLessThan(2 * TIMEOUT_MS + 1_000);
  await vi.waitFor(() => expect(fake.requests.map((r) => r.state)).toEqual(['aborted', 'aborted']));
});

test('aborting a flush rejects with an AbortError and hangs up the request', async () => {
  fake.setTranscriptionFault({ hangMs: Infinity });
  const controller = new AbortController();
  const flushed = spokenTurn().flush(controller.signal);
  await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
  controller.abort();
  const error = await rejectionOf(flushed);
  expect(error).not.toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ name: 'AbortError' });
  await vi.waitFor(() => expect(fake.requests[0]?.state).toBe('aborted'));
});
