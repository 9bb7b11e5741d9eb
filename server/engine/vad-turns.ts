// Glue from incoming audio to turn events: chunks of any size → model-sized frames → speech
// probabilities → TurnDetector. Also keeps recent audio, because speech is only confirmed
// 200 ms after it began: the STT must still get the utterance from its first syllable.
import { FrameAssembler, int16ToFloat32, samplesForMs } from '../audio/pcm.ts';
import { ENGINE_SAMPLE_RATE } from '../providers/types.ts';
import type { VoiceActivityDetector, VoiceActivityModel } from '../providers/types.ts';
import { TurnDetector } from './turn-detector.ts';
import type { TurnDetectorOptions, TurnEvent } from './turn-detector.ts';

export interface VadTurnTrackerOptions {
  turn?: Partial<TurnDetectorOptions>;
  /** Audio kept from before the first voiced frame, for the STT to hear the onset. */
  preRollMs?: number;
}

/** Audio the ring holds beyond pre-roll + confirmation: covers a chunk or two of inference lag. */
const RING_HEADROOM_MS = 1000;

export class VadTurnTracker {
  private readonly detector: VoiceActivityDetector;
  private readonly frames: FrameAssembler;
  private readonly turns: TurnDetector;
  private readonly preRollSamples: number;
  private readonly ring: Int16Array;
  /** Samples pushed so far: the stream position of the ring's newest sample + 1. */
  private written = 0;
  /** Where the current turn's speech began, once speech_started has been emitted. */
  private turnStart: number | null = null;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(model: VoiceActivityModel, options: VadTurnTrackerOptions = {}) {
    this.detector = model.createDetector();
    this.frames = new FrameAssembler(model.frameSamples);
    this.turns = new TurnDetector(options.turn);
    this.preRollSamples = samplesForMs(options.preRollMs ?? 300, ENGINE_SAMPLE_RATE);
    const confirmMs = options.turn?.confirmSpeechMs ?? 200;
    this.ring = new Int16Array(this.preRollSamples + samplesForMs(confirmMs + RING_HEADROOM_MS, ENGINE_SAMPLE_RATE));
  }

  get inTurn(): boolean {
    return this.turnStart !== null;
  }

  /** Samples pushed so far (the session clock the events' positions use). */
  get receivedSamples(): number {
    return this.written;
  }

  /**
   * Feeds 16 kHz audio; resolves with the turn events its complete frames caused. Calls may
   * overlap: frames are judged strictly in the order pushed. `pcm` may be reused once this returns.
   */
  push(pcm: Int16Array): Promise<TurnEvent[]> {
    this.remember(pcm);
    // Converted now, not when the model gets to them: frames may be views of the caller's buffer.
    const frames = this.frames.push(pcm).map((frame) => int16ToFloat32(frame));
    const judged = this.tail.then(() => this.judge(frames));
    this.tail = judged.catch(() => {});
    return judged;
  }

  /**
   * A copy of recent audio up to the newest sample pushed: during a turn from `preRollMs` before
   * the speech began (as far as the ring reaches), otherwise the last `preRollMs`. The engine sends
   * it to the STT on speech_started, then the audio it pushes afterwards.
   */
  takePreRoll(): Int16Array {
    const oldestKept = Math.max(0, this.written - this.ring.length);
    const from = this.turnStart === null ? this.written - this.preRollSamples : this.turnStart - this.preRollSamples;
    const start = Math.max(from, oldestKept);
    const out = new Int16Array(this.written - start);
    const ringStart = start % this.ring.length;
    const firstPart = Math.min(out.length, this.ring.length - ringStart);
    out.set(this.ring.subarray(ringStart, ringStart + firstPart));
    out.set(this.ring.subarray(0, out.length - firstPart), firstPart);
    return out;
  }

  close(): void {
    this.detector.close();
  }

  private async judge(frames: Float32Array[]): Promise<TurnEvent[]> {
    const events: TurnEvent[] = [];
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      let probability: number;
      try {
        probability = await this.detector.probability(frame);
      } catch (error) {
        // Keep the clock on the audio so later events still carry true positions.
        for (let j = i; j < frames.length; j++) this.turns.skip(frames[j]!.length);
        throw error;
      }
      const event = this.turns.push(probability, frame.length);
      if (!event) continue;
      this.turnStart = event.type === 'speech_started' ? event.speechStartSample : null;
      events.push(event);
    }
    return events;
  }

  private remember(pcm: Int16Array): void {
    const capacity = this.ring.length;
    const source = pcm.length > capacity ? pcm.subarray(pcm.length - capacity) : pcm;
    const at = (this.written + (pcm.length - source.length)) % capacity;
    const firstPart = Math.min(source.length, capacity - at);
    this.ring.set(source.subarray(0, firstPart), at);
    this.ring.set(source.subarray(firstPart), 0);
    this.written += pcm.length;
  }
}
