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
/**
 * The most audio the ring grows to while the model is behind. It grows rather than overwrite
 * audio the model has not judged yet: on a loaded machine the answers came seconds late (1–4 s
 * measured with two test suites on two cores), and a speech start confirmed that late must still
 * hand the STT the words, not the silence after them. 30 s is about 1 MB; past it the oldest goes.
 */
const RING_MAX_MS = 30_000;

export class VadTurnTracker {
  private readonly detector: VoiceActivityDetector;
  private readonly frames: FrameAssembler;
  private readonly turns: TurnDetector;
  private readonly preRollSamples: number;
  /** Audio kept before the newest voiced run can have begun: confirmation plus one frame. */
  private readonly confirmSamples: number;
  private readonly maxRingSamples: number;
  private ring: Int16Array;
  /** The pre-roll of the current turn has been handed out: the turn's onset need not be kept. */
  private preRollTaken = false;
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
    this.confirmSamples = samplesForMs(confirmMs, ENGINE_SAMPLE_RATE) + model.frameSamples;
    this.ring = new Int16Array(this.preRollSamples + samplesForMs(confirmMs + RING_HEADROOM_MS, ENGINE_SAMPLE_RATE));
    this.maxRingSamples = Math.max(this.ring.length, samplesForMs(RING_MAX_MS, ENGINE_SAMPLE_RATE));
  }

  get inTurn(): boolean {
    return this.turnStart !== null;
  }

  /** See TurnDetector.setEndSilenceMs: a flow state's own endpointing. */
  setEndSilenceMs(ms: number | null): void {
    this.turns.setEndSilenceMs(ms);
  }

  /** Samples pushed so far (the session clock the events' positions use). */
  get receivedSamples(): number {
    return this.written;
  }

  /**
   * Feeds 16 kHz audio; resolves with the turn events its complete frames caused. Calls may
   * overlap: frames are judged strictly in the order pushed. `pcm` may be reused once this returns.
   *
   * Every frame goes to the model as soon as it is whole, without waiting for the answer about
   * the one before (the detector keeps its frames in call order). Waiting made the VAD's pace one
   * frame per round trip to the model's thread: on a loaded machine (two test suites on two cores)
   * that trip took 100–1000 ms against 32 ms of audio a frame, so the VAD fell 20 s behind the
   * caller, and by the time it confirmed speech the ring no longer held it — the STT heard silence.
   */
  push(pcm: Int16Array): Promise<TurnEvent[]> {
    this.remember(pcm);
    // Converted now, not when the model gets to them: frames may be views of the caller's buffer.
    const frames = this.frames.push(pcm).map((frame) => {
      const samples = int16ToFloat32(frame);
      return { samples: samples.length, probability: this.ask(samples) };
    });
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
    const from = this.turnStart === null ? this.written - this.preRollSamples : this.turnStart - this.preRollSamples;
    if (this.turnStart !== null) this.preRollTaken = true;
    return this.copyFromRing(from);
  }

  /** The ring's audio from stream position `from` (or its oldest sample) to the newest. */
  private copyFromRing(from: number): Int16Array {
    const start = Math.max(from, this.written - this.ring.length, 0);
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

  /** The model's answer for one frame; a failure is read (and reported) when its turn comes in judge(). */
  private ask(frame: Float32Array): Promise<number> {
    let answer: Promise<number>;
    try {
      answer = this.detector.probability(frame);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.catch(() => {}); // not unhandled while earlier frames are still being judged
    return answer;
  }

  private async judge(frames: Array<{ samples: number; probability: Promise<number> }>): Promise<TurnEvent[]> {
    const events: TurnEvent[] = [];
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      let probability: number;
      try {
        probability = await frame.probability;
      } catch (error) {
        // Keep the clock on the audio so later events still carry true positions.
        for (let j = i; j < frames.length; j++) this.turns.skip(frames[j]!.samples);
        throw error;
      }
      const event = this.turns.push(probability, frame.samples);
      if (!event) continue;
      if (event.type === 'speech_started' || event.type === 'turn_ended') {
        this.turnStart = event.type === 'speech_started' ? event.speechStartSample : null;
        this.preRollTaken = false;
      }
      events.push(event);
    }
    return events;
  }

  private remember(pcm: Int16Array): void {
    this.growRingFor(pcm.length);
    const capacity = this.ring.length;
    const source = pcm.length > capacity ? pcm.subarray(pcm.length - capacity) : pcm;
    const at = (this.written + (pcm.length - source.length)) % capacity;
    const firstPart = Math.min(source.length, capacity - at);
    this.ring.set(source.subarray(0, firstPart), at);
    this.ring.set(source.subarray(firstPart), 0);
    this.written += pcm.length;
  }

  /**
   * Grows the ring (up to RING_MAX_MS) when `incoming` more samples would overwrite audio a
   * pre-roll may still need: the onset of a turn not yet handed out, or, while no turn is
   * confirmed, anything the model has not judged yet (a run of speech may begin there).
   */
  private growRingFor(incoming: number): void {
    const judged = this.turns.samplePosition;
    const keepFrom = (this.turnStart !== null && !this.preRollTaken ? this.turnStart : judged - this.confirmSamples) - this.preRollSamples;
    const needed = this.written + incoming - Math.max(0, keepFrom);
    if (needed <= this.ring.length || this.ring.length >= this.maxRingSamples) return;
    const kept = this.copyFromRing(0);
    this.ring = new Int16Array(Math.min(this.maxRingSamples, Math.max(needed, 2 * this.ring.length)));
    // Two block copies, not one sample at a time: under load the model falls behind and every
    // session's ring grows at once, on the thread that paces audio.
    const at = (this.written - kept.length) % this.ring.length;
    const firstPart = Math.min(kept.length, this.ring.length - at);
    this.ring.set(kept.subarray(0, firstPart), at);
    this.ring.set(kept.subarray(firstPart), 0);
  }
}
