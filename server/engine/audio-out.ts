// The agent's voice on its way out: sentences of synthesized audio, sent as 20 ms frames paced
// in real time. The first frames of a burst leave at once (so latency is not rounded up to the
// next tick); later frames leave on the session's own schedule, OUTPUT_LEAD_MS before they are
// due to play. It also knows how much of each sentence was actually sent, which is what a
// barge-in records as spoken.
//
// The lead is the listener's cushion: a frame is heard without a gap as long as it arrives before
// its play time, so a pause of the event loop shorter than the lead (a garbage collection under
// load, a burst of packets) costs the caller nothing. 40 ms is two frames, the size of the audio
// chunks Pipecat's output transports send by default (4 × 10 ms, each on the wire at its start).
// What it costs: after a barge-in the caller's side may still hold up to 40 ms of the cut reply
// (a WebSocket client can drop it on `interrupted`); the server itself sends nothing more.
import { ENGINE_SAMPLE_RATE } from '../providers/types.ts';

export const FRAME_SAMPLES = ENGINE_SAMPLE_RATE / 50; // 20 ms
const FRAME_MS = 20;
export const OUTPUT_LEAD_MS = 40;
let lateFrameCount = 0;
let underrunFrameCount = 0;

interface Segment {
  text: string;
  /** Which model message the sentence belongs to (null for speech cues and fallback lines). */
  tag: number | null;
  /** Kept whole until the sentence is done, so a pause can replay it from its start. */
  chunks: Int16Array[];
  /** The chunk the next frame starts in. */
  chunkIndex: number;
  /** Samples queued so far, and sent so far. */
  queued: number;
  sent: number;
  /** No more audio will be added to this segment. */
  complete: boolean;
}

export interface SpokenSentence {
  tag: number | null;
  text: string;
  /** What of the sentence was actually sent before the stop ('' when none of it). */
  spoken: string;
  whole: boolean;
}

/** Where one sentence's synthesized audio goes, in order. */
export interface SegmentWriter {
  readonly text: string;
  append(pcm: Int16Array): void;
  /** No more audio for this sentence (also after a failure: what came is played). */
  complete(): void;
}

export interface AudioOutListener {
  sendFrame(frame: Int16Array): void;
  /** The first frame of a burst of speech left. */
  onStarted(): void;
  /** Everything queued was sent and the speaker was told nothing more is coming. */
  onFinished(): void;
}

export class AudioOut {
  private readonly segments: Segment[] = [];
  private offsetInChunk = 0;
  /** Paused (the caller began to speak over the agent): no frame leaves until resume() or stop(). */
  private paused = false;
  private burstStartedAt = 0;
  private framesInBurst = 0;
  private speaking = false;
  private open = false;
  /** The queue ran dry while the reply went on (synthesis slower than playback): not a late frame. */
  private starved = false;
  /** Segments of the current reply sent in full. */
  private sentSegments: Segment[] = [];
  /** Callers waiting for the unsent audio to drop below a number of samples. */
  private bufferWaiters: Array<{ below: number; resolve: () => void }> = [];

  constructor(
    private readonly listener: AudioOutListener,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get isSpeaking(): boolean {
    return this.speaking;
  }

  /** True while a reply is being spoken or more of it may still come. */
  get isBusy(): boolean {
    return this.speaking || this.open || this.segments.length > 0;
  }

  /** Samples synthesized and not yet sent, over every queued sentence. */
  get bufferedSamples(): number {
    let buffered = 0;
    for (const segment of this.segments) buffered += segment.queued - segment.sent;
    return buffered;
  }

  /**
   * Resolves once less than `ms` of synthesized audio waits to be sent (at once if so already, and
   * on stop()). The speech queue synthesizes the next sentence only then: audio a barge-in would
   * throw away is never paid for, in CPU for embedded TTS or in money for a hosted one.
   */
  whenBufferedBelow(ms: number): Promise<void> {
    const below = (ms * ENGINE_SAMPLE_RATE) / 1000;
    if (this.bufferedSamples < below) return Promise.resolve();
    return new Promise((resolve) => this.bufferWaiters.push({ below, resolve }));
  }

  private releaseBufferWaiters(all: boolean): void {
    if (this.bufferWaiters.length === 0) return;
    const buffered = all ? 0 : this.bufferedSamples;
    const waiting = this.bufferWaiters;
    this.bufferWaiters = waiting.filter((waiter) => buffered >= waiter.below);
    for (const waiter of waiting) if (buffered < waiter.below) waiter.resolve();
  }

  /** A reply starts: frames may arrive in several segments until endReply(). */
  beginReply(): void {
    this.open = true;
  }

  /** A sentence's audio starts; returns a handle to append its chunks to. */
  beginSegment(text: string, tag: number | null = null): SegmentWriter {
    const segment: Segment = { text, tag, chunks: [], chunkIndex: 0, queued: 0, sent: 0, complete: false };
    this.segments.push(segment);
    return {
      text,
      append: (pcm) => {
        if (pcm.length === 0 || !this.segments.includes(segment)) return;
        segment.chunks.push(pcm);
        segment.queued += pcm.length;
        this.pump();
      },
      complete: () => {
        segment.complete = true;
        this.pump();
      },
    };
  }

  /** Nothing more will be added to the reply; finishes once the queue drains. */
  endReply(): void {
    this.open = false;
    this.pump();
  }

  /**
   * Stops at once (barge-in): nothing queued is sent any more. Returns, for every sentence of
   * the reply, the part actually spoken: whole sentences sent in full, and for the one cut off
   * the words in proportion to the audio sent.
   */
  stop(): SpokenSentence[] {
    const report: SpokenSentence[] = this.sentSegments.map((s) => ({ tag: s.tag, text: s.text, spoken: s.text, whole: true }));
    for (const segment of this.segments) {
      const words = segment.text.split(/\s+/).filter(Boolean);
      const count = segment.sent === 0 ? 0 : Math.floor((words.length * segment.sent) / Math.max(segment.queued, 1));
      report.push({ tag: segment.tag, text: segment.text, spoken: words.slice(0, count).join(' '), whole: false });
    }
    this.segments.length = 0;
    this.offsetInChunk = 0;
    this.paused = false;
    this.open = false;
    this.speaking = false;
    this.sentSegments = [];
    this.releaseBufferWaiters(true);
    return report;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Holds the reply where it is (caller speech over the agent that may be only "uh-huh"): no
   * frame leaves, and everything queued stays, until resume() or stop(). Only while speaking.
   */
  pause(): boolean {
    if (!this.speaking || this.paused) return false;
    this.paused = true;
    return true;
  }

  /**
   * Goes on after a pause, from the start of the sentence that was playing: the caller heard
   * part of it, talked, and would not follow the rest from mid-word. `fromSentenceStart` false:
   * from where it stopped (a pause too short to have been talked over: a cough's hiccup).
   */
  resume(fromSentenceStart = true): void {
    if (!this.paused) return;
    this.paused = false;
    const head = this.segments[0];
    if (head && fromSentenceStart) {
      head.sent = 0;
      head.chunkIndex = 0;
      this.offsetInChunk = 0;
    }
    // A new burst: the pause is no late frame, and the listener's cushion is rebuilt.
    this.burstStartedAt = this.now();
    this.framesInBurst = 0;
    this.starved = false;
    this.pump();
  }

  /** Frames sent after their play time because the process was busy, since start (all sessions). */
  static get lateFrames(): number {
    return lateFrameCount;
  }

  /**
   * Frames sent after their play time in the middle of a reply because their audio was not there
   * yet (synthesis slower than playback, or a model round still running), since start.
   */
  static get underrunFrames(): number {
    return underrunFrameCount;
  }

  /** Called by the shared clock: sends every frame that is due now. */
  tick(): void {
    this.pump();
  }

  private pump(): void {
    if (this.paused) return;
    for (;;) {
      const head = this.segments[0];
      if (!head) {
        if (this.speaking && !this.open) this.finish();
        // The reply goes on but its next sentence has not begun: a gap in synthesis, like a
        // segment waiting for audio, so a frame it makes late counts as an underrun.
        else this.noteStarved();
        return;
      }
      if (head.sent >= head.queued) {
        if (!head.complete) {
          this.noteStarved();
          return; // waiting for more synthesized audio of this sentence
        }
        this.segments.shift();
        head.chunks = [];
        this.sentSegments.push(head);
        this.offsetInChunk = 0;
        continue;
      }
      const now = this.now();
      if (!this.speaking) {
        this.speaking = true;
        this.burstStartedAt = now;
        this.framesInBurst = 0;
        this.listener.onStarted();
      } else if (this.framesInBurst * FRAME_MS - OUTPUT_LEAD_MS > now - this.burstStartedAt) {
        return; // the next frame is not due to leave yet
      }
      // Late: the frame leaves after the moment it should be playing, so the caller heard a gap.
      // A burst's first frame starts its schedule and is never late: after resume() the clock has
      // moved on a little between the burst's start and this reading, which is no gap.
      const lateness = this.framesInBurst === 0 ? 0 : now - (this.burstStartedAt + this.framesInBurst * FRAME_MS);
      // A gap the caller heard (the next sentence's synthesis came too late, or a stall longer
      // than the lead) restarts the schedule, with a new lead, rather than bursting out the
      // backlog of "missed" frames. A shorter wait only eats into the lead: the frames held back
      // leave at once and the schedule, and what the caller has buffered, stay as they were.
      if (lateness > 0) {
        if (this.starved) underrunFrameCount++;
        else lateFrameCount++;
        this.burstStartedAt = now;
        this.framesInBurst = 0;
      }
      this.starved = false;
      const frame = this.takeFrame(head);
      this.framesInBurst++;
      this.listener.sendFrame(frame);
      this.releaseBufferWaiters(false);
    }
  }

  /** No audio to send: starved if a frame was due to leave by now (being ahead is not starving). */
  private noteStarved(): void {
    if (this.speaking && this.framesInBurst * FRAME_MS - OUTPUT_LEAD_MS <= this.now() - this.burstStartedAt) this.starved = true;
  }

  /** Up to one 20 ms frame from the segment; a sentence's last frame is padded with silence. */
  private takeFrame(segment: Segment): Int16Array {
    const frame = new Int16Array(FRAME_SAMPLES);
    let filled = 0;
    while (filled < FRAME_SAMPLES && segment.sent < segment.queued) {
      const chunk = segment.chunks[segment.chunkIndex]!;
      const take = Math.min(FRAME_SAMPLES - filled, chunk.length - this.offsetInChunk);
      frame.set(chunk.subarray(this.offsetInChunk, this.offsetInChunk + take), filled);
      filled += take;
      segment.sent += take;
      this.offsetInChunk += take;
      if (this.offsetInChunk >= chunk.length) {
        segment.chunkIndex++;
        this.offsetInChunk = 0;
      }
    }
    return frame;
  }

  private finish(): void {
    this.speaking = false;
    this.sentSegments = [];
    this.listener.onFinished();
  }
}

/**
 * One timer for every session's output, so a hundred sessions cost one timer, not a hundred.
 * It runs only while some session is registered.
 */
export class AudioClock {
  private readonly outputs = new Set<AudioOut>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly intervalMs = 5) {}

  add(out: AudioOut): void {
    this.outputs.add(out);
    this.timer ??= setInterval(() => {
      for (const output of this.outputs) output.tick();
    }, this.intervalMs);
  }

  remove(out: AudioOut): void {
    this.outputs.delete(out);
    if (this.outputs.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}
