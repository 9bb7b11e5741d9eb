// Transcription per turn: the turn's audio is buffered and sent as one WAV when the turn ends.
// Works with OpenAI and with local whisper servers that speak its API, through `baseUrl`.
import { toFile } from 'openai';
import { concatPcm, encodeWav } from '../../audio/pcm.ts';
import { createOpenAIClient } from '../openai-client.ts';
import { withRetry } from '../retry.ts';
import { ENGINE_SAMPLE_RATE, ProviderError, type SpeechToText, type TranscriptionStream } from '../types.ts';
import { DEFAULT_MODELS } from '../catalog.ts';

export interface OpenAISpeechToTextOptions {
  /** Optional for local servers, which ignore it. */
  apiKey?: string;
  /** An OpenAI-compatible `/v1` URL. */
  baseUrl?: string;
  model?: string;
  /** Time allowed for each transcription request. */
  timeoutMs?: number;
}

export const OPENAI_STT_DEFAULTS = { model: DEFAULT_MODELS.stt.openai, timeoutMs: 10_000 } as const;

const PROVIDER = 'openai';

export function createOpenAISpeechToText(options: OpenAISpeechToTextOptions = {}): SpeechToText {
  const client = createOpenAIClient(options);
  const model = options.model ?? OPENAI_STT_DEFAULTS.model;
  const timeoutMs = options.timeoutMs ?? OPENAI_STT_DEFAULTS.timeoutMs;

  return {
    provider: PROVIDER,
    open({ language, model: flowModel }): TranscriptionStream {
      const turnModel = flowModel ?? model;
      let buffered: Int16Array[] = [];
      let closed = false;
      // Whisper wants ISO-639-1 ('en'), the engine speaks BCP 47 ('en-US').
      const whisperLanguage = language.split('-')[0]?.toLowerCase() || undefined;
      return {
        onInterim: null,
        write(pcm) {
          // The caller may reuse its buffer, and the turn is only sent at flush.
          if (!closed) buffered.push(pcm.slice());
        },
        async flush(signal) {
          const pcm = concatPcm(buffered);
          buffered = [];
          if (pcm.length === 0) return '';
          const file = await toFile(encodeWav(pcm, ENGINE_SAMPLE_RATE), 'turn.wav', { type: 'audio/wav' });
          const result = await withRetry(
            (attemptSignal) =>
              client.audio.transcriptions.create({ model: turnModel, file, response_format: 'json', ...(whisperLanguage ? { language: whisperLanguage } : {}) }, { signal: attemptSignal }),
            { provider: PROVIDER, timeoutMs, signal },
          );
          const text: unknown = (result as { text?: unknown } | null)?.text;
          if (typeof text !== 'string') throw new ProviderError(PROVIDER, 'bad_response', 'the transcription has no text');
          return text.trim();
        },
        close() {
          closed = true;
          buffered = [];
        },
      };
    },
  };
}
