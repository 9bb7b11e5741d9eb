// The user's side of the audio: PCM in, turn events out. VAD inference is asynchronous, so
// chunks are processed in order through one promise chain and never block the caller; the
// arrival time of each chunk is kept so the last voiced frame can be dated for metrics.
import type { VoiceActivityModel } from '../providers/types.ts';
import type { TurnEvent } from './turn-detector.ts';
import { VadTurnTracker, type VadTurnTrackerOptions } from './vad-turns.ts';

export interface TurnListener {
  /** Speech confirmed; `preRoll` is the audio from just before it began, for the STT. */
  onSpeechStarted(preRoll: Int16Array): void;
  /** Audio while the user is speaking (after the pre-roll). */
  onSpeech(pcm: Int16Array): void;
  /** The user stopped; `lastVoicedAt` is when the last voiced audio arrived (performance.now). */
  onTurnEnded(lastVoicedAt: number): void;
  /**
   * Between turns, voiced audio began (true) or ended before it was confirmed as speech (false).
   * Given, the VAD reports it; a caller resuming after a pause is then heard at once.
   */
  onVoicing?(voicing: boolean): void;
  onError(error: unknown): void;
}

export interface UserTurnInput {
  push(pcm: Int16Array): void;
  close(): void;
  /** The silence that ends the caller's turn from now on (a flow state's `endpointing_ms`); null: the server's. */
  setEndpointingMs?(ms: number | null): void;
}

/**
 * Audio → VadTurnTracker → listener. The pre-roll handed over at speech start already holds
 * every sample received so far, so later chunks are forwarded only for what lies beyond it.
 */
export function createVadUserInput(model: VoiceActivityModel, options: VadTurnTrackerOptions = {}, now: () => number = () => performance.now()) {
  return (listener: TurnListener): UserTurnInput =>
    new VadUserInput(new VadTurnTracker(model, listener.onVoicing ? { ...options, turn: { ...options.turn, reportVoicing: true } } : options), listener, now);
}

/** How many chunk arrival times are remembered for dating voiced samples (~100 s of 20 ms chunks). */
const ARRIVALS_KEPT = 5_000;

class VadUserInput implements UserTurnInput {
  private received = 0;
  /** Stream position up to which audio has been handed to the listener. */
  private forwardedUpTo = 0;
  private speaking = false;
  private closed = false;
  private readonly arrivals: Array<{ end: number; at: number }> = [];

  constructor(
    private readonly tracker: VadTurnTracker,
    private readonly listener: TurnListener,
    private readonly now: () => number,
  ) {}

  push(pcm: Int16Array): void {
    if (this.closed || pcm.length === 0) return;
    const start = this.received;
    this.received += pcm.length;
    this.arrivals.push({ end: this.received, at: this.now() });
    // Pruned in batches: splicing one entry off the front on every 20 ms frame would move the
    // whole array each time, on the audio path.
    if (this.arrivals.length > 2 * ARRIVALS_KEPT) this.arrivals.splice(0, this.arrivals.length - ARRIVALS_KEPT);
    this.tracker.push(pcm).then(
      (events) => this.handle(events, pcm, start),
      (error: unknown) => {
        if (!this.closed) this.listener.onError(error);
      },
    );
  }

  close(): void {
    this.closed = true;
    this.tracker.close();
  }

  setEndpointingMs(ms: number | null): void {
    this.tracker.setEndSilenceMs(ms);
  }

  private handle(events: TurnEvent[], pcm: Int16Array, start: number): void {
    if (this.closed) return;
    for (const event of events) {
      if (event.type === 'speech_started') {
        this.speaking = true;
        this.forwardedUpTo = this.tracker.receivedSamples;
        this.listener.onSpeechStarted(this.tracker.takePreRoll());
      } else if (event.type === 'turn_ended') {
        this.speaking = false;
        this.listener.onTurnEnded(this.timeOf(event.speechEndSample));
      } else {
        this.listener.onVoicing?.(event.type === 'voice_began');
      }
    }
    const end = start + pcm.length;
    if (this.speaking && end > this.forwardedUpTo) {
      this.listener.onSpeech(pcm.subarray(Math.max(0, this.forwardedUpTo - start)));
      this.forwardedUpTo = end;
    }
  }

  /** When the chunk holding `sample` arrived. */
  private timeOf(sample: number): number {
    for (const arrival of this.arrivals) if (arrival.end >= sample) return arrival.at;
    return this.now();
  }
}
