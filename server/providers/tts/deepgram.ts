// Deepgram Aura over REST: linear16 at the engine's 16 kHz with no container, streamed and
// handed on in ~100 ms chunks (network chunks are arbitrary, sometimes a few bytes).
import type { DeepgramClient } from '@deepgram/sdk';
import { createDeepgramClient } from '../deepgram-client.ts';
import { withRetryStream } from '../retry.ts';
import { ENGINE_SAMPLE_RATE, ProviderError, type TextToSpeech } from '../types.ts';
import { Pcm16ByteReader } from './pcm-bytes.ts';
import { DEFAULT_MODELS } from '../catalog.ts';

export interface DeepgramTextToSpeechOptions {
  apiKey: string;
  /** http(s) URL of a Deepgram-compatible server; Deepgram's own by default. */
  baseUrl?: string;
  model?: string;
  /** Time allowed for the first audio bytes, and between later chunks. */
  timeoutMs?: number;
}

export const DEEPGRAM_TTS_DEFAULTS = { model: DEFAULT_MODELS.tts.deepgram, timeoutMs: 10_000 } as const;

const PROVIDER = 'deepgram';
const CHUNK_SAMPLES = ENGINE_SAMPLE_RATE / 10;

export function createDeepgramTextToSpeech(options: DeepgramTextToSpeechOptions): TextToSpeech {
  const client = createDeepgramClient(options);
  const model = options.model ?? DEEPGRAM_TTS_DEFAULTS.model;
  const timeoutMs = options.timeoutMs ?? DEEPGRAM_TTS_DEFAULTS.timeoutMs;

  return {
    provider: PROVIDER,
    async *synthesize(text, signal) {
      if (text.trim() === '') return;
      const body = withRetryStream<Uint8Array>((attemptSignal) => openSpeech(client, model, text, timeoutMs, attemptSignal), { provider: PROVIDER, timeoutMs, signal });
      const reader = new Pcm16ByteReader();
      let held = new Int16Array(CHUNK_SAMPLES);
      let heldLength = 0;
      for await (const bytes of body) {
        const pcm = reader.push(bytes);
        for (let offset = 0; offset < pcm.length; ) {
          const take = Math.min(CHUNK_SAMPLES - heldLength, pcm.length - offset);
          held.set(pcm.subarray(offset, offset + take), heldLength);
          heldLength += take;
          offset += take;
          if (heldLength === CHUNK_SAMPLES) {
            yield held;
            held = new Int16Array(CHUNK_SAMPLES);
            heldLength = 0;
          }
        }
      }
      if (heldLength > 0) yield held.slice(0, heldLength);
    },
  };
}

async function openSpeech(client: DeepgramClient, model: string, text: string, timeoutMs: number, signal: AbortSignal): Promise<AsyncIterator<Uint8Array>> {
  const { data, rawResponse } = await client.speak.v1.audio
    .generate(
      { text, model, encoding: 'linear16', sample_rate: ENGINE_SAMPLE_RATE, container: 'none' },
      // The SDK's own timer only covers the headers; ours (one second shorter) decides first.
      { abortSignal: signal, maxRetries: 0, timeoutInSeconds: Math.ceil(timeoutMs / 1000) + 1 },
    )
    .withRawResponse();
  const type = rawResponse.headers.get('content-type') ?? '';
  const stream = data.stream();
  if (type.startsWith('text/') || type.includes('json')) {
    void stream?.cancel();
    throw new ProviderError(PROVIDER, 'bad_response', `${PROVIDER} answered speech with ${type}`);
  }
  if (!stream) throw new ProviderError(PROVIDER, 'bad_response', `${PROVIDER} answered speech with no body`);
  return stream[Symbol.asyncIterator]();
}
