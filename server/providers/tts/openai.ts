// OpenAI speech (or a compatible local server): raw 24 kHz PCM16, streamed and resampled to the
// engine's 16 kHz as it arrives, so the first audio plays before the sentence is synthesised.
import { StreamingResampler } from '../../audio/resampler.ts';
import { createOpenAIClient } from '../openai-client.ts';
import { withRetryStream } from '../retry.ts';
import { ENGINE_SAMPLE_RATE, ProviderError, type TextToSpeech } from '../types.ts';
import { Pcm16ByteReader } from './pcm-bytes.ts';
import { DEFAULT_MODELS } from '../catalog.ts';

/** Input samples resampled at a time: 250 ms of 24 kHz audio, well under a millisecond of work. */
const RESAMPLE_SLICE = 6_000;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface OpenAITextToSpeechOptions {
  /** Optional for local servers, which ignore it. */
  apiKey?: string;
  /** An OpenAI-compatible `/v1` URL. */
  baseUrl?: string;
  model?: string;
  voice?: string;
  /** Time allowed for the first audio bytes, and between later chunks. */
  timeoutMs?: number;
}

export const OPENAI_TTS_DEFAULTS = { model: DEFAULT_MODELS.tts.openai, voice: 'alloy', timeoutMs: 10_000 } as const;

const PROVIDER = 'openai';
/** What `response_format: 'pcm'` always is. */
const OPENAI_PCM_RATE = 24_000;

export function createOpenAITextToSpeech(options: OpenAITextToSpeechOptions = {}): TextToSpeech {
  const client = createOpenAIClient(options);
  const model = options.model ?? OPENAI_TTS_DEFAULTS.model;
  const voice = options.voice ?? OPENAI_TTS_DEFAULTS.voice;
  const timeoutMs = options.timeoutMs ?? OPENAI_TTS_DEFAULTS.timeoutMs;

  return {
    provider: PROVIDER,
    async *synthesize(text, signal, hints) {
      if (text.trim() === '') return;
      const body = withRetryStream<Uint8Array>(
        async (attemptSignal) => {
          const response = await client.audio.speech.create({ model, voice: hints?.voice ?? voice, input: text, response_format: 'pcm' }, { signal: attemptSignal });
          return audioBody(response);
        },
        { provider: PROVIDER, timeoutMs, signal },
      );
      const reader = new Pcm16ByteReader();
      const resampler = new StreamingResampler(OPENAI_PCM_RATE, ENGINE_SAMPLE_RATE);
      for await (const bytes of body) {
        // A local server can hand over seconds of audio in one chunk; resampling it in slices,
        // with a turn of the event loop between them, keeps every other session's frames on time.
        const samples = reader.push(bytes);
        for (let offset = 0; offset < samples.length; offset += RESAMPLE_SLICE) {
          if (offset > 0) await yieldToEventLoop();
          const pcm = resampler.process(samples.subarray(offset, offset + RESAMPLE_SLICE));
          if (pcm.length > 0) yield pcm;
        }
      }
      const tail = resampler.flush();
      if (tail.length > 0) yield tail;
    },
  };
}

/** The body as audio bytes; a 200 that carries a web page or JSON is not speech. */
function audioBody(response: Response): AsyncIterator<Uint8Array> {
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('text/') || type.includes('json')) {
    void response.body?.cancel();
    throw new ProviderError(PROVIDER, 'bad_response', `${PROVIDER} answered speech with ${type}`);
  }
  if (!response.body) throw new ProviderError(PROVIDER, 'bad_response', `${PROVIDER} answered speech with no body`);
  return response.body[Symbol.asyncIterator]();
}
