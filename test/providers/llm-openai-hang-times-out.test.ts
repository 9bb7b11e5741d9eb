import { afterEach, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { ProviderError } from '../../server/providers/types.ts';
import { DEFAULT_REPLY, type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { collect, neverAborted, rejectionOf } from './support.ts';

const TIMEOUT_MS = 200;
let fake: FakeOpenAI;
// The first request of a process also loads Node's fetch; with a 200 ms budget that load would
// be measured instead of the server, so it happens here first.
beforeAll(async () => {
  const warm = await startFakeOpenAI();
  await collect(createOpenAILanguageModel({ baseUrl: warm.url }).stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: neverAborted() }));
  await warm.close();
});
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(() => fake.close());

const ask = () =>
  collect(createOpenAILanguageModel({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS }).stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: neverAborted() }));

test('a server that never answers fails as a timeout after one retry, and both requests are hung up', async () => {
  fake.setRules([{ respond: { hangMs: Infinity } }]);
  const started = performance.now();
  const error = await rejectionOf(ask());
  const elapsed = performance.now() - started;

  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ kind: 'timeout' });
  expect(elapsed).toBeGreaterThanOrEqual(2 * TIMEOUT_MS - 20);
  expect(elapsed).toBeLessThan(2 * TIMEOUT_MS + 1_000);
  await vi.waitFor(() => expect(fake.requests.map((r) => r.state)).toEqual(['aborted', 'aborted']));
});

test('a first attempt that hangs is retried and the second answer gets through', async () => {
  fake.setRules([{ when: { nth: 1 }, respond: { hangMs: Infinity } }]);
  const chunks = await ask();
  expect(chunks.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('')).toBe(DEFAULT_REPLY);
  expect(fake.requests).toHaveLength(2);
});

test('headers followed by silence count as a hang too', async () => {
  fake.setRules([{ respond: { text: 'Too late.', firstChunkDelayMs: 5_000 } }]);
  const error = await rejectionOf(ask());
  expect(error).toMatchObject({ kind: 'timeout' });
  expect(fake.requests).toHaveLength(2);
});

test('a stream that stalls after it started fails as a timeout and is not retried', async () => {
  fake.setRules([{ respond: { text: 'one two three', chunkDelayMs: 2_000 } }]);
  const error = await rejectionOf(ask());
  expect(error).toMatchObject({ kind: 'timeout' });
  expect(fake.requests).toHaveLength(1);
  await vi.waitFor(() => expect(fake.requests[0]?.state).toBe('aborted'));
});
