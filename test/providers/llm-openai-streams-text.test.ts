import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import type { LlmChunk } from '../../server/providers/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { collect, neverAborted } from './support.ts';

const REPLY = 'Hi there, how can I help you today?';
let fake: FakeOpenAI;

beforeEach(async () => {
  fake = await startFakeOpenAI({
    rules: [{ when: { lastUserText: /hello/i, systemIncludes: 'Be brief' }, respond: { text: REPLY } }],
  });
});
afterEach(() => fake.close());

const llm = () => createOpenAILanguageModel({ apiKey: 'sk-test', baseUrl: fake.url, model: 'gpt-test' });
const conversation = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Hello!' },
];

test('the answer arrives as several text chunks that join into the whole reply, then done', async () => {
  const chunks = await collect(llm().stream({ messages: conversation, tools: [], signal: neverAborted() }));
  const texts = chunks.filter((c): c is Extract<LlmChunk, { type: 'text' }> => c.type === 'text');
  expect(texts.length).toBeGreaterThan(3);
  expect(texts.map((c) => c.text).join('')).toBe(REPLY);
  expect(chunks.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
});

test('the first words are handed on while the rest of the answer is still coming', async () => {
  fake.setRules([{ respond: { text: REPLY, chunkDelayMs: 25 } }]);
  const started = performance.now();
  let firstTextAt = 0;
  for await (const chunk of llm().stream({ messages: conversation, tools: [], signal: neverAborted() })) {
    if (chunk.type === 'text' && firstTextAt === 0) firstTextAt = performance.now() - started;
  }
  const total = performance.now() - started;
  // Eight words 25 ms apart: the first is in hand well before the last.
  expect(total - firstTextAt).toBeGreaterThan(150);
});

test('the request asks for a stream with usage, carries the key, and leaves tools out when there are none', async () => {
  await collect(llm().stream({ messages: conversation, tools: [], signal: neverAborted() }));
  expect(fake.requests).toHaveLength(1);
  const request = fake.requests[0]!;
  expect(request.path).toBe('/v1/chat/completions');
  expect(request.headers.authorization).toBe('Bearer sk-test');
  expect(request.body).toMatchObject({ model: 'gpt-test', messages: conversation, stream: true, stream_options: { include_usage: true } });
  expect(request.body).not.toHaveProperty('tools');
  expect(request.body).not.toHaveProperty('parallel_tool_calls');
});

test('a local OpenAI-compatible server is used through its base URL with no key configured', async () => {
  fake.setRules([{ respond: { text: 'Local model here.' } }]);
  const local = createOpenAILanguageModel({ baseUrl: fake.url, model: 'llama3.2:3b' });
  const chunks = await collect(local.stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: neverAborted() }));
  expect(chunks.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('')).toBe('Local model here.');
  expect(local.model).toBe('llama3.2:3b');
  expect(fake.requests[0]?.body).toMatchObject({ model: 'llama3.2:3b' });
  // The SDK insists on a key; local servers ignore whatever placeholder is sent.
  expect(fake.requests[0]?.headers.authorization).toMatch(/^Bearer \S+$/);
});

test("the response's token counts, as the vendor reports them in the stream's last chunk, come just before done", async () => {
  const chunks = await collect(llm().stream({ messages: conversation, tools: [], signal: neverAborted() }));
  const usage = chunks.at(-2);
  expect(usage).toMatchObject({ type: 'usage', inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
  // The fake counts about four characters a token, as OpenAI's tokenizer does for English.
  expect((usage as { outputTokens: number }).outputTokens).toBe(REPLY.length >> 2);
  expect((usage as { inputTokens: number }).inputTokens).toBeGreaterThan(0);
});
