import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { ProviderError } from '../../server/providers/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { collect, rejectionOf } from './support.ts';

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(() => fake.close());

test('aborting mid-answer stops the stream with an AbortError and hangs up the request', async () => {
  fake.setRules([{ respond: { text: 'this answer is long and slow to arrive', chunkDelayMs: 100 } }]);
  const llm = createOpenAILanguageModel({ baseUrl: fake.url });
  const controller = new AbortController();
  const texts: string[] = [];
  const error = await rejectionOf(
    (async () => {
      for await (const chunk of llm.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: controller.signal })) {
        if (chunk.type === 'text') texts.push(chunk.text);
        if (texts.length === 2) controller.abort();
      }
    })(),
  );
  expect(error).not.toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ name: 'AbortError' });
  expect(texts).toEqual(['this', ' answer']);
  await vi.waitFor(() => expect(fake.requests[0]?.state).toBe('aborted'));
  expect(fake.requests).toHaveLength(1);
});

test('aborting while the server has not answered yet rejects at once with an AbortError, without a retry', async () => {
  fake.setRules([{ respond: { hangMs: Infinity } }]);
  const llm = createOpenAILanguageModel({ baseUrl: fake.url, timeoutMs: 10_000 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const started = performance.now();
  const error = await rejectionOf(collect(llm.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: controller.signal })));
  expect(error).toMatchObject({ name: 'AbortError' });
  expect(performance.now() - started).toBeLessThan(1_000);
  await vi.waitFor(() => expect(fake.requests[0]?.state).toBe('aborted'));
  expect(fake.requests).toHaveLength(1);
});

test('a consumer that stops reading early hangs up the request', async () => {
  fake.setRules([{ respond: { text: 'one two three four five six', chunkDelayMs: 50 } }]);
  const llm = createOpenAILanguageModel({ baseUrl: fake.url });
  for await (const chunk of llm.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: new AbortController().signal })) {
    if (chunk.type === 'text') break;
  }
  await vi.waitFor(() => expect(fake.requests[0]?.state).toBe('aborted'));
});
