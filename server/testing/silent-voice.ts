// The voice of typed runs (scripted and model modes): silence as long as the words would take to
// say, made at once. The reply is "spoken" on the runner's clock, so a barge-in lands in it at
// the moment the test names, and nothing is synthesized that no one will hear.
import { ENGINE_SAMPLE_RATE, type TextToSpeech } from '../providers/types.ts';

/** About 160 words a minute, a calm speaking rate. */
export const MS_PER_WORD = 375;

export function createSilentVoice(msPerWord = MS_PER_WORD): TextToSpeech {
  return {
    provider: 'silent',
    // eslint-disable-next-line @typescript-eslint/require-await
    async *synthesize(text: string, signal: AbortSignal): AsyncIterable<Int16Array> {
      signal.throwIfAborted();
      const words = text.split(/\s+/).filter(Boolean).length;
      yield new Int16Array(Math.round((words * msPerWord * ENGINE_SAMPLE_RATE) / 1000));
    },
  };
}
