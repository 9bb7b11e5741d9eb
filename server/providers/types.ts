// One interface per kind of provider. Audio everywhere inside the engine is PCM16, mono,
// 16 kHz, little-endian, as Int16Array. Providers never read process.env: keys and options are
// injected. Every call takes an AbortSignal; an abort exits quietly (an AbortError), never as a
// provider failure.
import type { OpenAITool } from '../flow/runtime.ts';

export const ENGINE_SAMPLE_RATE = 16_000;

/** Why a provider call failed, and whether trying again may help. */
export type ProviderErrorKind = 'timeout' | 'auth' | 'rate_limit' | 'server' | 'network' | 'bad_response' | 'bad_request';

export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(
    readonly provider: string,
    readonly kind: ProviderErrorKind,
    message: string,
    readonly retryable: boolean = kind === 'timeout' || kind === 'rate_limit' || kind === 'server' || kind === 'network',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

// ── Speech to text ──────────────────────────────────────────────────────────────────────────

export interface TranscriptionStream {
  /** Audio of the user's turn as it arrives (the engine writes from just before speech starts). */
  write(pcm: Int16Array): void;
  /**
   * The turn ended: returns the final text of everything written since the last flush ('' when
   * nothing was recognised). Rejects with ProviderError on failure or timeout.
   */
  flush(signal: AbortSignal): Promise<string>;
  /** Partial text while the user speaks, for live captions; streaming providers only. */
  onInterim: ((text: string) => void) | null;
  /** Ends the stream and releases its connection. Idempotent. */
  close(): void;
}

export interface SpeechToText {
  readonly provider: string;
  /**
   * Opens a stream for one session; streaming providers connect lazily on first write. `model`
   * is a flow's own (`settings.stt.model`, docs/flows.md#extended-flow-keys), over the configured
   * one.
   */
  open(options: { language: string; model?: string }): TranscriptionStream;
}

// ── Language model ──────────────────────────────────────────────────────────────────────────

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type LlmChunk =
  /** A piece of the spoken answer, as it streams. */
  | { type: 'text'; text: string }
  /** One complete tool call (arguments accumulated), in the order the model made them. */
  | { type: 'tool_call'; call: ChatToolCall }
  /** The tokens the response took, when the vendor says (OpenAI-compatible servers with `stream_options.include_usage`). */
  | { type: 'usage'; inputTokens: number; outputTokens: number }
  | { type: 'done'; finishReason: string };

export interface LanguageModel {
  readonly provider: string;
  readonly model: string;
  /**
   * Streams one response. The first chunk's arrival is the time to first token. `model` and
   * `temperature`, when given, are a flow's own (docs/flows.md#extended-flow-keys) and win over
   * the provider's.
   */
  stream(request: { messages: ChatMessage[]; tools: OpenAITool[]; signal: AbortSignal; model?: string; temperature?: number }): AsyncIterable<LlmChunk>;
  /**
   * One whole answer held to a JSON schema (structured outputs), as the JSON text the model
   * wrote: for work beside a conversation, such as a flow test's judge. Absent when the provider
   * has no such answers. The text is the model's: the caller still parses and checks it.
   */
  completeJson?(request: JsonRequest): Promise<string>;
}

export interface JsonRequest {
  messages: ChatMessage[];
  /** A name for the schema (letters, digits, _ and -) and the JSON schema itself, strict. */
  schema: { name: string; schema: Record<string, unknown> };
  signal: AbortSignal;
  model?: string;
}

// ── Text to speech ──────────────────────────────────────────────────────────────────────────

export interface TextToSpeech {
  readonly provider: string;
  /** Speaks one sentence: PCM16 16 kHz mono chunks as they arrive. */
  synthesize(text: string, signal: AbortSignal, hints?: SynthesisHints): AsyncIterable<Int16Array>;
}

/** What the engine knows about a sentence when it asks for it; a hosted voice ignores it. */
export interface SynthesisHints {
  /**
   * Milliseconds of the session's speech already waiting to play before this sentence. Near 0,
   * the caller is waiting for it (a reply's first sentence, a greeting); an embedded synthesizer
   * that shares the machine gives such a sentence precedence over look-ahead work.
   */
  aheadMs: number;
  /**
   * A flow's own voice (`settings.voice.voice`, docs/flows.md#extended-flow-keys), for the vendor
   * that has it; absent: the configured one.
   */
  voice?: string;
}

// ── Turn detection ──────────────────────────────────────────────────────────────────────────

export interface VoiceActivityModel {
  readonly provider: string;
  /** Samples per frame the model takes (512 for Silero v5 at 16 kHz). */
  readonly frameSamples: number;
  /** One detector per session: the model keeps state between frames. */
  createDetector(): VoiceActivityDetector;
}

export interface VoiceActivityDetector {
  /**
   * Probability (0–1) that the frame of `frameSamples` samples holds speech. Calls may overlap
   * (the next frame is asked before this one is answered): a detector judges frames in call order.
   */
  probability(frame: Float32Array): Promise<number>;
  reset(): void;
  close(): void;
}

// ── One account's set ───────────────────────────────────────────────────────────────────────

/** The providers one session uses: speech to text and the model may be missing, a voice never is. */
export interface SessionProviders {
  stt: SpeechToText | null;
  llm: LanguageModel | null;
  tts: TextToSpeech;
}

/** An account's providers (its own keys, else the server's) and what a minute with them costs. */
export interface AccountProviders {
  providers: SessionProviders;
  /** Cents per minute this account pays with these providers, every part in use. */
  ratePerMinute: number;
  /** What each part costs a minute (0: the account's own key, or an embedded provider). */
  partPrices: Readonly<Record<'stt' | 'llm' | 'tts', number>>;
}
