// Synthetic audio shared by the fakes and the provider tests: tone bursts that stand in for
// speech, an energy detector that finds them again, and a WAV reader. A −12 dBFS tone is far
// above the −40 dBFS threshold and zeros are far below it, so detection is exact and tests never
// depend on a speech model.

export const FRAME_MS = 20;

export interface ToneOptions {
  frequency?: number;
  dbfs?: number;
}

export function toneBurst(ms: number, sampleRate: number, options: ToneOptions = {}): Int16Array {
  const frequency = options.frequency ?? 440;
  const amplitude = 32767 * 10 ** ((options.dbfs ?? -12) / 20);
  const samples = Math.round((ms * sampleRate) / 1000);
  const out = new Int16Array(samples);
  // A 2 ms ramp at each end keeps the burst free of clicks, like the edges of a spoken word.
  const ramp = Math.max(1, Math.round(sampleRate / 500));
  for (let i = 0; i < samples; i++) {
    const edge = Math.min(1, i / ramp, (samples - 1 - i) / ramp);
    out[i] = Math.round(amplitude * edge * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  }
  return out;
}

export function silence(ms: number, sampleRate: number): Int16Array {
  return new Int16Array(Math.round((ms * sampleRate) / 1000));
}

export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * What the fake TTS servers say for `text`: one tone per word (its pitch varies so words are
 * tellable apart in a recording) with a 10 ms gap, `msPerWord` in all.
 */
export function speechLikeAudio(text: string, sampleRate: number, msPerWord = 60): Int16Array {
  const words = text.split(/\s+/).filter(Boolean);
  const parts: Int16Array[] = [];
  words.forEach((_, i) => {
    parts.push(toneBurst(msPerWord - 10, sampleRate, { frequency: 300 + 40 * (i % 5) }));
    parts.push(silence(10, sampleRate));
  });
  return concatPcm(parts);
}

export function rmsDbfs(pcm: Int16Array, from = 0, to = pcm.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += (pcm[i] ?? 0) ** 2;
  const rms = Math.sqrt(sum / Math.max(1, to - from));
  return rms === 0 ? -Infinity : 20 * Math.log10(rms / 32768);
}

export interface Utterance {
  startMs: number;
  /** End of the last voiced frame. */
  endMs: number;
  pcm: Int16Array;
}

export type TrackerEvent =
  | { type: 'start'; atMs: number }
  | { type: 'voiced'; atMs: number; sinceStartMs: number }
  | { type: 'end'; utterance: Utterance };

export interface TrackerOptions {
  thresholdDbfs?: number;
  /** Silence that ends an utterance; null: only `finish()` ends one. */
  hangoverMs?: number | null;
}

/** Finds utterances in audio pushed in pieces of any size, by RMS energy over 20 ms frames. */
export class UtteranceTracker {
  readonly #frameSamples: number;
  readonly #threshold: number;
  readonly #hangoverMs: number | null;
  #carry = new Int16Array(0);
  #audioMs = 0;
  #startMs: number | null = null;
  #lastVoicedEndMs = 0;
  #frames: Int16Array[] = [];

  constructor(
    readonly sampleRate: number,
    options: TrackerOptions = {},
  ) {
    this.#frameSamples = Math.round((sampleRate * FRAME_MS) / 1000);
    this.#threshold = options.thresholdDbfs ?? -40;
    this.#hangoverMs = options.hangoverMs === undefined ? 300 : options.hangoverMs;
  }

  get audioMs(): number {
    return this.#audioMs;
  }

  get inUtterance(): boolean {
    return this.#startMs !== null;
  }

  /** Audio of the utterance so far (from its first voiced frame). */
  currentPcm(): Int16Array {
    return concatPcm(this.#frames);
  }

  push(pcm: Int16Array): TrackerEvent[] {
    const joined = concatPcm([this.#carry, pcm]);
    const events: TrackerEvent[] = [];
    let offset = 0;
    for (; offset + this.#frameSamples <= joined.length; offset += this.#frameSamples) {
      const frame = joined.subarray(offset, offset + this.#frameSamples);
      const atMs = this.#audioMs;
      this.#audioMs += FRAME_MS;
      const voiced = rmsDbfs(frame) >= this.#threshold;
      if (voiced && this.#startMs === null) {
        this.#startMs = atMs;
        this.#frames = [];
        events.push({ type: 'start', atMs });
      }
      if (this.#startMs === null) continue;
      this.#frames.push(frame.slice());
      if (voiced) {
        this.#lastVoicedEndMs = atMs + FRAME_MS;
        events.push({ type: 'voiced', atMs, sinceStartMs: atMs + FRAME_MS - this.#startMs });
      } else if (this.#hangoverMs !== null && this.#audioMs - this.#lastVoicedEndMs >= this.#hangoverMs) {
        const ended = this.finish();
        if (ended) events.push({ type: 'end', utterance: ended });
      }
    }
    this.#carry = joined.slice(offset);
    return events;
  }

  /** Ends the utterance in progress, if any (a client's Finalize, or the end of a file). */
  finish(): Utterance | null {
    if (this.#startMs === null) return null;
    const startMs = this.#startMs;
    const voicedFrames = Math.round((this.#lastVoicedEndMs - startMs) / FRAME_MS);
    const pcm = concatPcm(this.#frames.slice(0, voicedFrames));
    this.#startMs = null;
    this.#frames = [];
    return { startMs, endMs: this.#lastVoicedEndMs, pcm };
  }
}

export function findUtterances(pcm: Int16Array, sampleRate: number, options: TrackerOptions = {}): Utterance[] {
  const tracker = new UtteranceTracker(sampleRate, options);
  const found: Utterance[] = [];
  for (const event of tracker.push(pcm)) if (event.type === 'end') found.push(event.utterance);
  const last = tracker.finish();
  if (last) found.push(last);
  return found;
}

export interface WavAudio {
  sampleRate: number;
  channels: number;
  pcm: Int16Array;
}

/** Reads a PCM16 RIFF/WAVE file; throws on anything else, as a real service would reject it. */
export function parseWav(bytes: Uint8Array): WavAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let sampleRate = 0;
  let channels = 0;
  let bits = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ') {
      if (view.getUint16(body, true) !== 1) throw new Error('WAV is not PCM');
      channels = view.getUint16(body + 2, true);
      sampleRate = view.getUint32(body + 4, true);
      bits = view.getUint16(body + 14, true);
    } else if (id === 'data') {
      if (bits !== 16 || channels < 1) throw new Error('WAV is not 16-bit PCM');
      const end = Math.min(bytes.length, body + size);
      const frames = Math.floor((end - body) / (2 * channels));
      const pcm = new Int16Array(frames);
      // Keep only the first channel: the fakes transcribe mono speech.
      for (let i = 0; i < frames; i++) pcm[i] = view.getInt16(body + i * 2 * channels, true);
      return { sampleRate, channels, pcm };
    }
    at = body + size + (size % 2);
  }
  throw new Error('WAV has no data chunk');
}

/** Little-endian bytes of PCM16 samples, as they travel on the wire. */
export function pcmBytes(pcm: Int16Array): Buffer {
  const out = Buffer.alloc(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i] ?? 0, i * 2);
  return out;
}

export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(Math.floor(bytes.length / 2));
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}
