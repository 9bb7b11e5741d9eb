// Sentences flite has said, kept to be said again without running it. A flow's fixed lines (its
// greeting, a phone menu, "Please hold while I connect you.") are the same words every call, and
// flite's output depends only on the voice and the text: each run cost CPU (about 50 ms for a
// phone menu's short lines, 0.15 s for a long sentence) and kept the caller waiting that long. The last-used sentences are kept, up to a
// size in bytes; an agent's model-written replies pass through and are pushed out by newer ones.
import type { FliteAudio } from './flite-worker-host.ts';

/** 8 MiB: about four minutes of 16 kHz speech, far more than a flow's fixed lines. */
export const FLITE_CACHE_BYTES = 8 * 1024 * 1024;

export class FliteSpeechCache {
  /** Oldest use first (a Map keeps insertion order; a hit moves its entry to the end). */
  private readonly entries = new Map<string, FliteAudio>();
  private bytes = 0;

  constructor(readonly maxBytes: number = FLITE_CACHE_BYTES) {
    if (!(maxBytes >= 0)) throw new RangeError(`a flite cache needs a size of 0 bytes or more, not ${maxBytes}`);
  }

  /** The sentence's audio, or undefined. The caller must not change the samples: copy them first. */
  get(scope: string, voice: string, text: string): FliteAudio | undefined {
    const key = keyOf(scope, voice, text);
    const audio = this.entries.get(key);
    if (audio) {
      this.entries.delete(key);
      this.entries.set(key, audio);
    }
    return audio;
  }

  /** Keeps a copy of the audio, pushing out the least recently used sentences to stay within the size. */
  set(scope: string, voice: string, text: string, audio: FliteAudio): void {
    const size = audio.samples.byteLength;
    if (size > this.maxBytes) return;
    const key = keyOf(scope, voice, text);
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.samples.byteLength;
    }
    for (const [oldest, kept] of this.entries) {
      if (this.bytes + size <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= kept.samples.byteLength;
    }
    this.entries.set(key, { sampleRate: audio.sampleRate, samples: audio.samples.slice() });
    this.bytes += size;
  }

  /** Bytes of audio kept now. */
  get size(): number {
    return this.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

function keyOf(scope: string, voice: string, text: string): string {
  return `${scope}\u0000${voice}\u0000${text}`;
}
