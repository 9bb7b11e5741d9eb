// Turns per-frame speech probabilities into turn events. Pure: no clock, no I/O. Time is the
// count of samples fed so far, so a session replayed from a recording gives the same events.
import { ENGINE_SAMPLE_RATE } from '../providers/types.ts';

export interface TurnDetectorOptions {
  /** A frame at or above this starts (or continues) speech. */
  activationThreshold: number;
  /** Once speaking, frames stay voiced down to this: Silero dips mid-word, and hysteresis keeps one word one run. */
  deactivationThreshold: number;
  /** Continuous voiced audio needed before a turn starts; shorter blips (a cough, a click) never start one. */
  confirmSpeechMs: number;
  /** Unvoiced audio that ends the turn. */
  endSilenceMs: number;
  /**
   * Also report voiced audio outside a turn before it is confirmed (`voice_began`) and a run that
   * ended unconfirmed (`voice_faded`): a caller resuming after a pause is heard at once, not
   * confirmSpeechMs later.
   */
  reportVoicing: boolean;
}

export const DEFAULT_TURN_OPTIONS: Readonly<TurnDetectorOptions> = {
  activationThreshold: 0.5,
  deactivationThreshold: 0.35,
  confirmSpeechMs: 200,
  endSilenceMs: 500,
  reportVoicing: false,
};

/** Sample positions count 16 kHz samples since the session started. */
export type TurnEvent =
  | {
      type: 'speech_started';
      /** Start of the first voiced frame of the turn. */
      speechStartSample: number;
      /** End of the frame that confirmed the speech. */
      atSample: number;
    }
  | {
      /** Voiced audio outside a turn, not yet confirmed as speech (reportVoicing). */
      type: 'voice_began';
      atSample: number;
    }
  | {
      /** The voiced run ended before it was confirmed: a blip, not speech (reportVoicing). */
      type: 'voice_faded';
      atSample: number;
    }
  | {
      type: 'turn_ended';
      speechStartSample: number;
      /** End of the last voiced frame: endpointing = atSample − speechEndSample. */
      speechEndSample: number;
      /** End of the frame that completed the closing silence. */
      atSample: number;
    };

export class TurnDetector {
  private readonly options: TurnDetectorOptions;
  private readonly confirmSamples: number;
  private endSilenceSamples: number;
  private position = 0;
  private voiced = false;
  private runStart = 0;
  private runSamples = 0;
  private turnStart: number | null = null;
  private lastVoicedEnd = 0;
  private silenceSamples = 0;

  constructor(options: Partial<TurnDetectorOptions> = {}, readonly sampleRate: number = ENGINE_SAMPLE_RATE) {
    this.options = { ...DEFAULT_TURN_OPTIONS, ...options };
    const { activationThreshold, deactivationThreshold } = this.options;
    if (deactivationThreshold > activationThreshold) {
      throw new RangeError(`deactivationThreshold (${deactivationThreshold}) must not exceed activationThreshold (${activationThreshold})`);
    }
    this.confirmSamples = Math.round((this.options.confirmSpeechMs * sampleRate) / 1000);
    this.endSilenceSamples = Math.round((this.options.endSilenceMs * sampleRate) / 1000);
  }

  /**
   * The silence that ends a turn from now on, in ms; null goes back to the configured one. A
   * flow state's `endpointing_ms` (docs/flows.md): a turn under way ends by the new length.
   */
  setEndSilenceMs(ms: number | null): void {
    this.endSilenceSamples = Math.round(((ms ?? this.options.endSilenceMs) * this.sampleRate) / 1000);
  }

  /** Samples fed so far. */
  get samplePosition(): number {
    return this.position;
  }

  get inTurn(): boolean {
    return this.turnStart !== null;
  }

  /** Feeds one frame's speech probability; returns the event the frame causes, if any. */
  push(probability: number, frameSamples: number): TurnEvent | null {
    const start = this.position;
    const end = start + frameSamples;
    this.position = end;
    this.voiced = probability >= (this.voiced ? this.options.deactivationThreshold : this.options.activationThreshold);

    if (this.turnStart === null) {
      if (!this.voiced) {
        const faded = this.runSamples > 0;
        this.runSamples = 0;
        return faded && this.options.reportVoicing ? { type: 'voice_faded', atSample: end } : null;
      }
      const began = this.runSamples === 0;
      if (began) this.runStart = start;
      this.runSamples += frameSamples;
      if (this.runSamples < this.confirmSamples) return began && this.options.reportVoicing ? { type: 'voice_began', atSample: end } : null;
      this.turnStart = this.runStart;
      this.lastVoicedEnd = end;
      this.silenceSamples = 0;
      return { type: 'speech_started', speechStartSample: this.runStart, atSample: end };
    }

    if (this.voiced) {
      this.lastVoicedEnd = end;
      this.silenceSamples = 0;
      return null;
    }
    this.silenceSamples += frameSamples;
    if (this.silenceSamples < this.endSilenceSamples) return null;
    const event: TurnEvent = { type: 'turn_ended', speechStartSample: this.turnStart, speechEndSample: this.lastVoicedEnd, atSample: end };
    this.turnStart = null;
    this.runSamples = 0;
    return event;
  }

  /**
   * Moves the clock over audio that was not judged (a frame whose inference failed), so later
   * positions still match the audio. The skipped audio neither extends nor ends speech.
   */
  skip(samples: number): void {
    this.position += samples;
    // A run of voiced frames with a hole in it is not continuous speech.
    if (this.turnStart === null) this.runSamples = 0;
  }

  reset(): void {
    this.position = 0;
    this.voiced = false;
    this.runSamples = 0;
    this.turnStart = null;
    this.silenceSamples = 0;
  }
}
