import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { ProviderError } from '../../server/providers/types.ts';
import { DEFAULT_REPLY, type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { collect, neverAborted, rejectionOf } from './support.ts';

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-right' });
});
afterEach(() => fake.close());

const ask = (apiKey = 'sk-right') =>
  collect(createOpenAILanguageModel({ apiKey, baseUrl: fake.url }).stream({ messages: [{ role: 'user', content: 'Hi' }], tools: [], signal: neverAborted() }));

test('a 500 followed by a good answer is retried once and the caller only sees the answer', async () => {
  fake.setRules([{ when: { nth: 1 }, respond: { status: 500 } }]);
  const chunks = await ask();
  expect(chunks.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('')).toBe(DEFAULT_REPLY);
  expect(fake.requests).toHaveLength(2);
});

test('two 500s in a row fail as a retryable server error after exactly two requests', async () => {
  fake.setRules([{ respond: { status: 500 } }]);
  const error = await rejectionOf(ask());
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ provider: 'openai', kind: 'server', retryable: true });
  expect(fake.requests).toHaveLength(2);
});

test('a rate limit is retried like a server error', async () => {
  fake.setRules([{ when: { nth: 1 }, respond: { status: 429 } }]);
  await ask();
  expect(fake.requests).toHaveLength(2);
});

test('a refused key fails at once as an auth error, without a second request', async () => {
  const error = await rejectionOf(ask('sk-wrong'));
  expect(error).toBeInstanceOf(ProviderError);
  expect(error).toMatchObject({ kind: 'auth', retryable: false });
  expect(fake.requests).toHaveLength(1);
});

test('a 400 is the request’s fault and is not retried either', async () => {
  fake.setRules([{ respond: { status: 400 } }]);
  const error = await rejectionOf(ask());
  expect(error).toMatchObject({ kind: 'bad_request', retryable: false });
  expect(fake.requests).toHaveLength(1);
});
