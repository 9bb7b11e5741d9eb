import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { type LlmChunk, ProviderError } from '../../server/providers/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { neverAborted, rejectionOf } from './support.ts';

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(() => fake.close());

async function consume(seen: LlmChunk[]): Promise<void> {
  const llm = createOpenAILanguageModel({ baseUrl: fake.url, timeoutMs: 2_000 });
  for await (const chunk of llm.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: neverAborted() })) seen.push(chunk);
}

test('a malformed event stream fails as a bad response, not retried', async () => {
  fake.setRules([{ respond: { garbage: true } }]);
  const error = await rejectionOf(consume([]));
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ kind: 'bad_response', retryable: false });
  expect(fake.requests).toHaveLength(1);
});

test('a connection cut mid-answer fails as a network error after the text so far, and is not retried', async () => {
  fake.setRules([{ respond: { text: 'one two three four five', dropAfterChunks: 3 } }]);
  const seen: LlmChunk[] = [];
  const error = await rejectionOf(consume(seen));
  expect(error).toMatchObject({ kind: 'network' });
  // The role chunk and two words went out before the cut.
  expect(seen).toEqual([
    { type: 'text', text: 'one' },
    { type: 'text', text: ' two' },
  ]);
  expect(fake.requests).toHaveLength(1);
  expect(fake.requests[0]?.state).toBe('dropped');
});

test('a stream that ends without a finish_reason is a bad response, and its tool call is not handed on', async () => {
  fake.setRules([{ respond: { toolCalls: [{ name: 'transfer', arguments: { to: 'billing' } }], omitFinishReason: true } }]);
  const seen: LlmChunk[] = [];
  const error = await rejectionOf(consume(seen));
  expect(error).toMatchObject({ kind: 'bad_response' });
  expect(seen.filter((c) => c.type === 'tool_call')).toEqual([]);
});
