// The OpenAI model answering in a strict JSON schema (structured outputs), as the call analysis
// asks it (docs/api.md#outcome-and-success): the JSON text as the model wrote it, a refusal as an
// error that says so, and a schema strict mode cannot enforce refused by the API, as the real one does.
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { ProviderError } from '../../server/providers/types.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { neverAborted } from './support.ts';

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(() => fake.close());

const llm = () => createOpenAILanguageModel({ apiKey: 'sk-test', baseUrl: fake.url, model: 'gpt-test' });
const STRICT = { type: 'object', properties: { party: { type: ['integer', 'null'] } }, required: ['party'], additionalProperties: false };
const ask = (schema: Record<string, unknown> = STRICT) =>
  llm().completeJson!({ messages: [{ role: 'user', content: 'A table for a party of 4, please.' }], schema: { name: 'call_outcome', schema }, signal: neverAborted() });

test('sends a strict json_schema response format and gives back the JSON text', async () => {
  fake.setRules([{ when: { jsonSchemaName: 'call_outcome' }, respond: { extract: { party: /party of (\d+)/ } } }]);
  expect(await ask()).toBe('{"party":4}');
  expect((fake.requests[0]!.body as any).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'call_outcome', schema: STRICT, strict: true } });
  expect((fake.requests[0]!.body as any).stream).toBeUndefined();
});

test('a refusal is an error that says so, and text that is not JSON comes back as the text', async () => {
  fake.setRules([{ when: { nth: 1 }, respond: { refusal: "I can't help with that." } }, { respond: { json: 'four people' } }]);
  const refused = await ask().catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ProviderError);
  expect((refused as ProviderError).message).toContain("the model refused: I can't help with that.");
  expect(await ask()).toBe('four people');
});

test('a schema strict mode cannot enforce is refused as the real API refuses it', async () => {
  const loose = { type: 'object', properties: { party: { type: 'integer' } }, required: [], additionalProperties: false };
  const error = await ask(loose).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ProviderError);
  expect((error as ProviderError).message).toContain("Invalid schema for response_format 'call_outcome': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'party'.");
  const open = await ask({ type: 'object', properties: {}, required: [] }).catch((e: unknown) => e);
  expect((open as ProviderError).message).toContain("'additionalProperties' is required to be supplied and to be false");
});
