// Chat completions, streamed, with tools: OpenAI itself or any server that speaks its API
// (Ollama, LM Studio, vLLM, llama.cpp server) through `baseUrl`.
import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { OpenAITool } from '../../flow/runtime.ts';
import { createOpenAIClient } from '../openai-client.ts';
import { withRetry, withRetryStream } from '../retry.ts';
import { type ChatMessage, type ChatToolCall, type JsonRequest, type LanguageModel, type LlmChunk, ProviderError } from '../types.ts';
import { DEFAULT_MODELS } from '../catalog.ts';

export interface OpenAILanguageModelOptions {
  /** Optional for local servers, which ignore it. */
  apiKey?: string;
  /** An OpenAI-compatible `/v1` URL. */
  baseUrl?: string;
  model?: string;
  /** Time allowed to connect and receive the first chunk, and between later chunks. */
  timeoutMs?: number;
}

export const OPENAI_LLM_DEFAULTS = { model: DEFAULT_MODELS.llm.openai, timeoutMs: 15_000 } as const;

const PROVIDER = 'openai';

export function createOpenAILanguageModel(options: OpenAILanguageModelOptions = {}): LanguageModel {
  const client = createOpenAIClient(options);
  const model = options.model ?? OPENAI_LLM_DEFAULTS.model;
  const timeoutMs = options.timeoutMs ?? OPENAI_LLM_DEFAULTS.timeoutMs;
  return {
    provider: PROVIDER,
    model,
    stream: (request) => streamCompletion(client, model, timeoutMs, request),
    completeJson: (request) => completeJson(client, model, timeoutMs, request),
  };
}

/** A structured-outputs answer: `response_format: json_schema`, strict, not streamed. */
async function completeJson(client: OpenAI, model: string, timeoutMs: number, request: JsonRequest): Promise<string> {
  const completion = await withRetry(
    (signal) =>
      client.chat.completions.create(
        {
          model: request.model ?? model,
          messages: request.messages,
          response_format: { type: 'json_schema', json_schema: { name: request.schema.name, schema: request.schema.schema, strict: true } },
        },
        { signal },
      ),
    { provider: PROVIDER, timeoutMs, signal: request.signal },
  );
  const message = completion.choices[0]?.message;
  if (message?.refusal) throw new ProviderError(PROVIDER, 'bad_response', `the model refused: ${message.refusal}`, false);
  if (typeof message?.content !== 'string') throw new ProviderError(PROVIDER, 'bad_response', 'the answer had no content', false);
  return message.content;
}

async function* streamCompletion(
  client: OpenAI,
  model: string,
  timeoutMs: number,
  request: { messages: ChatMessage[]; tools: OpenAITool[]; signal: AbortSignal; model?: string; temperature?: number },
): AsyncGenerator<LlmChunk> {
  const body: ChatCompletionCreateParamsStreaming = {
    model: request.model ?? model,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    messages: request.messages,
    stream: true,
    stream_options: { include_usage: true },
    // OpenAI refuses parallel_tool_calls without tools, and some local servers refuse an empty list.
    ...(request.tools.length > 0 ? { tools: request.tools, parallel_tool_calls: true } : {}),
  };
  const chunks = withRetryStream<ChatCompletionChunk>(
    async (signal) => (await client.chat.completions.create(body, { signal }))[Symbol.asyncIterator](),
    { provider: PROVIDER, timeoutMs, signal: request.signal },
  );

  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  let finishReason: string | null = null;
  let lastUsage: { inputTokens: number; outputTokens: number } | null = null;
  for await (const chunk of chunks) {
    // The usage chunk that closes the stream has no choices. Some local servers send no usage,
    // or send it on every chunk: only a complete pair of counts is passed on, the last one wins.
    const usage = chunk.usage;
    if (usage && Number.isFinite(usage.prompt_tokens) && Number.isFinite(usage.completion_tokens)) lastUsage = { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta?.content) yield { type: 'text', text: choice.delta.content };
    for (const part of choice.delta?.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(part.index, call);
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  // Without a finish_reason the answer may be cut short, and a cut tool call must not run.
  if (finishReason === null) throw new ProviderError(PROVIDER, 'bad_response', 'the answer stream ended without a finish_reason');

  for (const [index, call] of [...calls.entries()].sort(([a], [b]) => a - b)) {
    if (!call.name) throw new ProviderError(PROVIDER, 'bad_response', `tool call ${index} has no function name`);
    // Some local servers leave the id out; the conversation still needs one to answer the call.
    const toolCall: ChatToolCall = { id: call.id || `call_${index}`, type: 'function', function: { name: call.name, arguments: call.arguments } };
    yield { type: 'tool_call', call: toolCall };
  }
  if (lastUsage) yield { type: 'usage', ...lastUsage };
  yield { type: 'done', finishReason };
}
