// One place that builds the `openai` SDK client for every OpenAI-compatible provider (chat,
// transcription, speech), so each is built the same way: retries off (withRetry owns them),
// nothing read from process.env, and quiet (failures surface as ProviderErrors instead).
import OpenAI from 'openai';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Local servers (Ollama, LM Studio, vLLM, llama.cpp, whisper servers) ignore the key but the SDK insists on one. */
export const PLACEHOLDER_API_KEY = 'no-key';

export interface OpenAIClientOptions {
  /** Optional for local servers that need none. */
  apiKey?: string;
  /** An OpenAI-compatible `/v1` URL; OpenAI's own by default. */
  baseUrl?: string;
}

export function createOpenAIClient(options: OpenAIClientOptions): OpenAI {
  // Every option the SDK would otherwise take from the environment is given explicitly.
  return new OpenAI({
    apiKey: options.apiKey || PLACEHOLDER_API_KEY,
    baseURL: options.baseUrl || OPENAI_BASE_URL,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    logLevel: 'off',
  });
}
