// The clocks a test session runs on. Typed runs step a virtual clock themselves: the agent's
// reply plays out as fast as the runner advances it, 20 ms at a time, so a 20-step test takes
// milliseconds and a barge-in lands exactly where the test says. Audio runs cannot jump ahead of
// the voice activity model and the speech to text, which work in real time: their clock runs at
// real time times `speed` (1 = real time, 2 = twice as fast).
import { AudioClock, type AudioOut } from '../engine/audio-out.ts';

export interface RunClock {
  /** The session's audio clock. */
  readonly audio: AudioClock;
  /** Milliseconds on this clock. */
  now(): number;
  /** Steps the clock on by one 20 ms frame (stepped clocks only; paced ones move by themselves). */
  readonly stepped: boolean;
  advance(ms: number): void;
}

export const FRAME_MS = 20;

/** An AudioClock that ticks only when told to. */
class ManualAudioClock extends AudioClock {
  readonly #outputs = new Set<AudioOut>();
  override add(out: AudioOut): void {
    this.#outputs.add(out);
  }
  override remove(out: AudioOut): void {
    this.#outputs.delete(out);
  }
  tickAll(): void {
    for (const output of this.#outputs) output.tick();
  }
}

export function steppedClock(): RunClock {
  const audio = new ManualAudioClock();
  let now = 0;
  return {
    audio,
    stepped: true,
    now: () => now,
    advance(ms) {
      for (let moved = 0; moved < ms; moved += FRAME_MS) {
        now += Math.min(FRAME_MS, ms - moved);
        audio.tickAll();
      }
    },
  };
}

export function pacedClock(speed: number): RunClock {
  const startedAt = performance.now();
  // A tick every 5 ms of the run's time: more often than the output's 40 ms lead at any speed.
  const audio = new AudioClock(Math.max(1, Math.floor(5 / speed)));
  return {
    audio,
    stepped: false,
    now: () => (performance.now() - startedAt) * speed,
    advance() {},
  };
}
