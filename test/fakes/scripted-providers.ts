// In-process fakes of the provider interfaces (server/providers/types.ts) and of the user's turn
// input, for testing a voice session by events in → events out without a server or a socket.
// Each fake follows a script and records what it was asked, and every delay is a timer, so on
// vitest's fake clock a scenario runs in milliseconds and its timings are exact.
import type { OpenAITool } from '../../server/flow/runtime.ts';
import type { TurnListener, UserTurnInput } from '../../server/engine/user-input.ts';
import {
  ENGINE_SAMPLE_RATE,
  ProviderError,
  type ChatMessage,
  type ChatToolCall,
  type LanguageModel,
  type LlmChunk,
  type SpeechToText,
  type TextToSpeech,
  type TranscriptionStream,
} from '../../server/providers/types.ts';

/**
 * Resolves after `ms` on whatever clock setTimeout runs on (the fake one in these tests); no
 * delay is no timer at all, so a provider scripted to answer at once takes 0 ms, not a tick.
 */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    if (ms <= 0) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

// ── Language model ──────────────────────────────────────────────────────────────────────────

export interface ScriptedReply {
  /** Spoken text, streamed in pieces of a few words. */
  text?: string;
  toolCalls?: Array<{ name: string; arguments?: Record<string, unknown> | string }>;
  /** Time to the first chunk. */
  firstChunkAfterMs?: number;
  /** Fails the request with this ProviderError kind instead of answering. */
  fail?: 'server' | 'timeout';
}

export interface ScriptedModelRequest {
  messages: ChatMessage[];
  tools: string[];
}

export interface ScriptedModel extends LanguageModel {
  /** Every request, with the messages as they were when it was made. */
  readonly requests: ScriptedModelRequest[];
}

/**
 * A model that answers each request with the next reply of the script. Past the end of the
 * script it says `fallback`.
 */
export function scriptedModel(replies: ScriptedReply[], fallback = 'Okay.'): ScriptedModel {
  const queue = [...replies];
  const requests: ScriptedModelRequest[] = [];
  let calls = 0;
  return {
    provider: 'scripted',
    model: 'scripted-1',
    requests,
    async *stream({ messages, tools, signal }: { messages: ChatMessage[]; tools: OpenAITool[]; signal: AbortSignal }): AsyncIterable<LlmChunk> {
      requests.push({ messages: structuredClone(messages), tools: tools.map((t) => t.function.name) });
      const reply = queue.shift() ?? { text: fallback };
      await sleep(reply.firstChunkAfterMs ?? 0, signal);
      if (reply.fail) throw new ProviderError('scripted-llm', reply.fail, `scripted ${reply.fail} failure`);
      // A few words per chunk, as a streaming model sends them.
      const words = (reply.text ?? '').split(/(?<=\s)/);
      for (let i = 0; i < words.length; i += 3) {
        signal.throwIfAborted();
        yield { type: 'text', text: words.slice(i, i + 3).join('') };
      }
      for (const call of reply.toolCalls ?? []) {
        const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
        const toolCall: ChatToolCall = { id: `call_${++calls}`, type: 'function', function: { name: call.name, arguments: args } };
        yield { type: 'tool_call', call: toolCall };
      }
      yield { type: 'done', finishReason: reply.toolCalls?.length ? 'tool_calls' : 'stop' };
    },
  };
}

// ── Text to speech ──────────────────────────────────────────────────────────────────────────

export interface ScriptedVoiceOptions {
  /** Audio per word: a sentence of n words lasts n × msPerWord. */
  msPerWord?: number;
  /** Time to the first audio of each sentence. */
  firstAudioAfterMs?: number;
}

export interface ScriptedVoice extends TextToSpeech {
  /** Every sentence asked for, in order. */
  readonly sentences: string[];
}

/** A voice whose audio length is proportional to the words, so "how much was heard" is exact. */
export function scriptedVoice(options: ScriptedVoiceOptions = {}): ScriptedVoice {
  const msPerWord = options.msPerWord ?? 200;
  const sentences: string[] = [];
  return {
    provider: 'scripted',
    sentences,
    async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
      sentences.push(text);
      await sleep(options.firstAudioAfterMs ?? 0, signal);
      const words = text.split(/\s+/).filter(Boolean).length;
      // Non-zero samples, so a test can tell speech from the silence that pads a last frame.
      yield new Int16Array(Math.round((words * msPerWord * ENGINE_SAMPLE_RATE) / 1000)).fill(1_000);
    },
  };
}

// ── Speech to text ──────────────────────────────────────────────────────────────────────────

export interface ScriptedTranscriber extends SpeechToText {
  /** Samples written to the session's stream so far. */
  readonly samplesHeard: () => number;
}

/** Hears each user turn as the next line of `transcripts` ('' once they run out). */
export function scriptedTranscriber(transcripts: string[], options: { flushAfterMs?: number } = {}): ScriptedTranscriber {
  const queue = [...transcripts];
  let samples = 0;
  return {
    provider: 'scripted',
    samplesHeard: () => samples,
    open(): TranscriptionStream {
      return {
        onInterim: null,
        write(pcm) {
          samples += pcm.length;
        },
        async flush(signal) {
          await sleep(options.flushAfterMs ?? 0, signal);
          return queue.shift() ?? '';
        },
        close() {},
      };
    },
  };
}

// ── The user's turns ────────────────────────────────────────────────────────────────────────

export interface ScriptedUser {
  /** The factory a session is built with (SessionSetup.userInput). */
  readonly userInput: (listener: TurnListener) => UserTurnInput;
  /** The voice activity detector confirms speech (a barge-in if the agent is busy). */
  startsSpeaking(): void;
  /** The turn ends; the last voiced audio was `silenceMs` ago (the endpointing time). */
  stopsSpeaking(silenceMs?: number): void;
  /** Between turns, voiced audio begins that the detector has not confirmed as speech yet. */
  voiceBegins(): void;
  /** That voiced audio ends before it was confirmed: a blip. */
  voiceFades(): void;
  /** Audio the session pushed in. */
  readonly samplesPushed: () => number;
}

/** Turn events on cue, instead of a voice activity model listening to audio. */
export function scriptedUser(): ScriptedUser {
  let listener: TurnListener | null = null;
  let pushed = 0;
  const active = () => {
    if (!listener) throw new Error('the session has not built its user input yet');
    return listener;
  };
  return {
    userInput(turnListener) {
      listener = turnListener;
      return {
        push(pcm) {
          pushed += pcm.length;
        },
        close() {
          listener = null;
        },
      };
    },
    startsSpeaking() {
      active().onSpeechStarted(new Int16Array(ENGINE_SAMPLE_RATE / 10));
    },
    stopsSpeaking(silenceMs = 500) {
      active().onTurnEnded(performance.now() - silenceMs);
    },
    voiceBegins() {
      active().onVoicing?.(true);
    },
    voiceFades() {
      active().onVoicing?.(false);
    },
    samplesPushed: () => pushed,
  };
}
