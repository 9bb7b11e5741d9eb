import { afterEach, beforeEach, expect, test } from 'vitest';
import type { OpenAITool } from '../../server/flow/runtime.ts';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { collect, neverAborted } from './support.ts';

const tool = (name: string, properties: Record<string, { type: 'string' | 'number' }> = {}): OpenAITool => ({
  type: 'function',
  function: { name, description: name, parameters: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false } },
});
const guessTool = tool('record_guess', { guess: { type: 'number' }, note: { type: 'string' } });
const ARGUMENTS = { guess: 42, note: 'the caller sounded very sure about this one, repeating it twice' };
let fake: FakeOpenAI;

beforeEach(async () => {
  fake = await startFakeOpenAI({
    rules: [
      { when: { toolsOffered: ['record_guess'], lastRole: 'user' }, respond: { toolCalls: [{ name: 'record_guess', arguments: ARGUMENTS }] } },
      {
        when: { lastUserText: /name is Ada.*pizza/ },
        respond: {
          text: 'Noted, thank you.',
          toolCalls: [
            { name: 'save_name', arguments: { name: 'Ada' } },
            { name: 'save_order', arguments: { item: 'pizza', size: 'large' } },
          ],
        },
      },
    ],
  });
});
afterEach(() => fake.close());

const llm = () => createOpenAILanguageModel({ apiKey: 'sk-test', baseUrl: fake.url });

test('a tool call whose arguments arrive in several pieces comes out as one complete call', async () => {
  const chunks = await collect(llm().stream({ messages: [{ role: 'user', content: 'Forty-two!' }], tools: [guessTool], signal: neverAborted() }));

  expect(chunks.map((c) => c.type)).toEqual(['tool_call', 'usage', 'done']);
  const call = chunks[0]?.type === 'tool_call' ? chunks[0].call : null;
  expect(call).toMatchObject({ type: 'function', function: { name: 'record_guess' } });
  expect(call?.id).toMatch(/^call_/);
  expect(JSON.parse(call?.function.arguments ?? '')).toEqual(ARGUMENTS);
  expect(chunks[2]).toEqual({ type: 'done', finishReason: 'tool_calls' });
});

test('the tools are offered with parallel calls allowed', async () => {
  await collect(llm().stream({ messages: [{ role: 'user', content: 'Forty-two!' }], tools: [guessTool], signal: neverAborted() }));
  expect(fake.requests[0]?.body).toMatchObject({ tools: [guessTool], parallel_tool_calls: true });
});

test('two tool calls in one answer come out after the text, in the order the model made them', async () => {
  const chunks = await collect(
    llm().stream({ messages: [{ role: 'user', content: 'My name is Ada and I want a large pizza.' }], tools: [tool('save_name'), tool('save_order')], signal: neverAborted() }),
  );
  const text = chunks.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('');
  const calls = chunks.flatMap((c) => (c.type === 'tool_call' ? [c.call] : []));
  expect(text).toBe('Noted, thank you.');
  expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
    ['save_name', { name: 'Ada' }],
    ['save_order', { item: 'pizza', size: 'large' }],
  ]);
  expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  expect(chunks.map((c) => c.type).slice(-4)).toEqual(['tool_call', 'tool_call', 'usage', 'done']);
});
