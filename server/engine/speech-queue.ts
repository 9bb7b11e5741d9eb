// The speech stage of an agent reply: sentences in, synthesized audio out to AudioOut, in order.
// Sentences are synthesized one at a time and only just ahead of playback, so a barge-in throws
// away little synthesis, and a sentence nobody heard a word of is reported as unheard.
import { isAbortError } from '../providers/retry.ts';
import { ENGINE_SAMPLE_RATE, type TextToSpeech } from '../providers/types.ts';
import type { AudioOut, SegmentWriter } from './audio-out.ts';
import type { TurnTiming } from './turn-timing.ts';

/**
 * How much synthesized speech may wait ahead of what is playing before the next sentence is
 * synthesized. Enough to hide a hosted TTS's first-byte time (typically 0.2–1 s); more would be
 * synthesis a barge-in throws away.
 */
export const SPEECH_LOOKAHEAD_MS = 2_500;

/**
 * Sentences to speech, in order, one synthesis at a time (the next sentence is synthesized
 * while the previous one plays, once less than SPEECH_LOOKAHEAD_MS is left to play). A failed
 * sentence is reported and skipped.
 */
export class SpeechQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly tts: TextToSpeech,
    private readonly audioOut: AudioOut,
    private readonly signal: AbortSignal,
    private readonly timing: TurnTiming | null,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** `tag` says which history message the sentence belongs to (null: cues and fallback lines). */
  say(text: string, tag: number | null): void {
    const spoken = text.trim();
    // After the abort nothing more is said: a segment begun now would never be completed, and
    // would hold up every later reply in the output queue. (An http tool's answer can arrive,
    // and its entry line be committed, after a barge-in cut the turn.)
    if (!spoken || this.signal.aborted) return;
    // The sentence joins the output queue now, before it is synthesized, so a barge-in reports
    // it as unheard instead of leaving it in the model's memory as if it had been spoken.
    const segment = this.audioOut.beginSegment(spoken, tag);
    this.tail = this.tail.then(() => this.synthesize(segment));
  }

  /** Resolves once every sentence said so far is synthesized (not yet played). */
  finished(): Promise<void> {
    return this.tail;
  }

  private async synthesize(segment: SegmentWriter): Promise<void> {
    if (this.signal.aborted) return;
    await this.audioOut.whenBufferedBelow(SPEECH_LOOKAHEAD_MS);
    if (this.signal.aborted) return;
    this.timing?.speechRequested();
    const aheadMs = (this.audioOut.bufferedSamples * 1000) / ENGINE_SAMPLE_RATE;
    try {
      for await (const pcm of this.tts.synthesize(segment.text, this.signal, { aheadMs })) {
        if (this.signal.aborted) return;
        this.timing?.speechAnswered();
        segment.append(pcm);
      }
    } catch (error) {
      if (this.signal.aborted || isAbortError(error)) return;
      this.onError(error);
    } finally {
      segment.complete();
    }
  }
}
