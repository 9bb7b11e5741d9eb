// The caller's side of an audio run: what the user says, synthesized by the embedded voice, and
// silence in between, streamed into the session 20 ms at a time on the run's clock, as a phone
// or a browser streams a live microphone.
import { FRAME_SAMPLES } from '../engine/audio-out.ts';
import type { TextToSpeech } from '../providers/types.ts';
import { FRAME_MS, type RunClock } from './clocks.ts';

/** Speech for each line, synthesized once per run: a barge-in must not wait for the synthesizer. */
export async function synthesizeLines(tts: TextToSpeech, lines: Iterable<string>, signal: AbortSignal): Promise<Map<string, Int16Array>> {
  const out = new Map<string, Int16Array>();
  for (const line of new Set(lines)) {
    const chunks: Int16Array[] = [];
    let length = 0;
    for await (const chunk of tts.synthesize(line, signal, { aheadMs: 0 })) {
      chunks.push(chunk);
      length += chunk.length;
    }
    const pcm = new Int16Array(length);
    let offset = 0;
    for (const chunk of chunks) {
      pcm.set(chunk, offset);
      offset += chunk.length;
    }
    out.set(line, pcm);
  }
  return out;
}

export class CallerAudio {
  private queued: Int16Array = new Int16Array(0);
  private offset = 0;
  private framesSent = 0;
  private readonly startedAt: number;
  private readonly timer: NodeJS.Timeout;
  /** When (run clock) the last utterance's final sample was sent; null before any. */
  lastUtteranceEndedAt: number | null = null;

  constructor(
    private readonly clock: RunClock,
    private readonly push: (frame: Int16Array) => void,
  ) {
    this.startedAt = clock.now();
    this.timer = setInterval(() => this.pump(), 5);
  }

  /** Still sending an utterance. */
  get busy(): boolean {
    return this.offset < this.queued.length;
  }

  /** Says `pcm` from the next frame on (after what is still being said). */
  say(pcm: Int16Array): void {
    const rest = this.queued.subarray(this.offset);
    const next = new Int16Array(rest.length + pcm.length);
    next.set(rest);
    next.set(pcm, rest.length);
    this.queued = next;
    this.offset = 0;
    this.lastUtteranceEndedAt = null;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private pump(): void {
    const due = Math.floor((this.clock.now() - this.startedAt) / FRAME_MS);
    // After a long pause of the process, the backlog is sent at once, as a network would deliver it.
    while (this.framesSent < due) {
      const frame = new Int16Array(FRAME_SAMPLES);
      if (this.busy) {
        const take = Math.min(FRAME_SAMPLES, this.queued.length - this.offset);
        frame.set(this.queued.subarray(this.offset, this.offset + take));
        this.offset += take;
        if (!this.busy) this.lastUtteranceEndedAt = this.clock.now();
      }
      this.framesSent++;
      this.push(frame);
    }
  }
}
