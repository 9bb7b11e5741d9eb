// PCM16 helpers. Engine audio is Int16Array, mono, little-endian (the byte order of every
// platform Node ships for, so typed-array views read wire bytes as they are).
// These run on 20 ms frames on the event loop that carries every session: views, not copies,
// wherever the memory layout allows, and no allocation a caller can avoid by passing a buffer.

/** Scales PCM16 to floats in [-1, 1) into `output` (reused across frames); returns the filled part. */
export function int16ToFloat32(input: Int16Array, output: Float32Array = new Float32Array(input.length)): Float32Array {
  if (output.length < input.length) throw new RangeError(`output holds ${output.length} samples, input has ${input.length}`);
  for (let i = 0; i < input.length; i++) output[i] = input[i]! / 32768;
  return output.length === input.length ? output : output.subarray(0, input.length);
}

export function concatPcm(chunks: readonly Int16Array[]): Int16Array {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  const out = new Int16Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** Root mean square relative to full scale: 1.0 is a full-scale square wave, 0 is silence. */
export function rms(pcm: Int16Array): number {
  if (pcm.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return Math.sqrt(sum / pcm.length) / 32768;
}

/** Level in dB relative to full scale; -Infinity for digital silence. */
export function dbfs(pcm: Int16Array): number {
  return 20 * Math.log10(rms(pcm));
}

export function samplesForMs(ms: number, sampleRate: number): number {
  return Math.round((ms * sampleRate) / 1000);
}

// ── Bytes ⇄ samples ─────────────────────────────────────────────────────────────────────────

/**
 * Reads bytes off the wire as PCM16. A view (no copy) when the bytes sit on an even offset, a copy
 * otherwise. Returns null for an odd byte count: half a sample means the client sent a broken
 * stream, which the caller reports rather than guessing where the samples start.
 */
export function int16FromBytes(bytes: Uint8Array): Int16Array | null {
  if (bytes.byteLength % 2 !== 0) return null;
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  const aligned = new Uint8Array(bytes.byteLength);
  aligned.set(bytes);
  return new Int16Array(aligned.buffer);
}

/** The bytes of `pcm` as a Buffer view (no copy), for sockets and files. */
export function bytesFromInt16(pcm: Int16Array): Buffer {
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

// ── Fixed frames from arbitrary chunks ──────────────────────────────────────────────────────

/**
 * Cuts a stream of chunks of any length into frames of `frameSamples` (320 = 20 ms for
 * transports, 512 for Silero). A frame that lies inside one chunk is a view of that chunk; only
 * a frame that straddles two chunks is copied, through one internal buffer. Views share memory
 * with the caller's chunk, so a caller that reuses its chunk buffer must consume frames first.
 */
export class FrameAssembler {
  private readonly pending: Int16Array;
  private pendingLength = 0;

  constructor(readonly frameSamples: number) {
    if (!Number.isInteger(frameSamples) || frameSamples <= 0) throw new RangeError(`frameSamples must be a positive integer, got ${frameSamples}`);
    this.pending = new Int16Array(frameSamples);
  }

  /** Samples held back until the next chunk completes a frame. */
  get bufferedSamples(): number {
    return this.pendingLength;
  }

  push(chunk: Int16Array): Int16Array[] {
    const frames: Int16Array[] = [];
    let offset = 0;
    if (this.pendingLength > 0) {
      const take = Math.min(this.frameSamples - this.pendingLength, chunk.length);
      this.pending.set(chunk.subarray(0, take), this.pendingLength);
      this.pendingLength += take;
      offset = take;
      if (this.pendingLength < this.frameSamples) return frames;
      // The pending buffer is reused, so the straddling frame must leave as its own copy.
      frames.push(this.pending.slice());
      this.pendingLength = 0;
    }
    while (chunk.length - offset >= this.frameSamples) {
      frames.push(chunk.subarray(offset, offset + this.frameSamples));
      offset += this.frameSamples;
    }
    if (offset < chunk.length) {
      this.pending.set(chunk.subarray(offset), 0);
      this.pendingLength = chunk.length - offset;
    }
    return frames;
  }

  /** The incomplete tail, zero-padded to a whole frame (null when nothing is pending). */
  flush(): Int16Array | null {
    if (this.pendingLength === 0) return null;
    const frame = new Int16Array(this.frameSamples);
    frame.set(this.pending.subarray(0, this.pendingLength));
    this.pendingLength = 0;
    return frame;
  }

  reset(): void {
    this.pendingLength = 0;
  }
}

// ── WAV ─────────────────────────────────────────────────────────────────────────────────────

export class WavFormatError extends Error {
  override name = 'WavFormatError';
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/** A canonical 44-byte-header RIFF/WAVE file, PCM16 mono. */
export function encodeWav(pcm: Int16Array, sampleRate: number): Uint8Array {
  const dataBytes = pcm.length * 2;
  const bytes = new Uint8Array(44 + dataBytes);
  const view = new DataView(bytes.buffer);
  const ascii = (offset: number, text: string) => {
    for (let i = 0; i < text.length; i++) bytes[offset + i] = text.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, WAVE_FORMAT_PCM, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  bytes.set(new Uint8Array(pcm.buffer, pcm.byteOffset, dataBytes), 44);
  return bytes;
}

/**
 * Reads a PCM16 WAV, mono or stereo (stereo is averaged to mono). Anything else (float, 8/24-bit,
 * compressed, more channels) is refused with a WavFormatError that names what was found.
 */
export function decodeWav(bytes: Uint8Array): { pcm: Int16Array; sampleRate: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number) => String.fromCharCode(bytes[offset]!, bytes[offset + 1]!, bytes[offset + 2]!, bytes[offset + 3]!);
  if (bytes.byteLength < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new WavFormatError('not a WAV file (no RIFF/WAVE header)');

  let format: { channels: number; sampleRate: number } | null = null;
  let offset = 12;
  while (offset + 8 <= bytes.byteLength) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.byteLength) throw new WavFormatError('WAV fmt chunk is truncated');
      let formatTag = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const sampleRate = view.getUint32(body + 4, true);
      const bits = view.getUint16(body + 14, true);
      // WAVE_FORMAT_EXTENSIBLE keeps the real format in the first two bytes of its sub-format GUID.
      if (formatTag === WAVE_FORMAT_EXTENSIBLE && size >= 40 && body + 26 <= bytes.byteLength) formatTag = view.getUint16(body + 24, true);
      if (formatTag !== WAVE_FORMAT_PCM) throw new WavFormatError(`WAV format ${formatTag} is not supported; send PCM (format 1)`);
      if (bits !== 16) throw new WavFormatError(`WAV has ${bits}-bit samples; only 16-bit PCM is supported`);
      if (channels !== 1 && channels !== 2) throw new WavFormatError(`WAV has ${channels} channels; only mono or stereo is supported`);
      if (sampleRate === 0) throw new WavFormatError('WAV sample rate is 0');
      format = { channels, sampleRate };
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('WAV data chunk comes before its fmt chunk');
      // Streamed WAVs leave the size at 0 or 0xFFFFFFFF: take what the file holds.
      const available = bytes.byteLength - body;
      const dataBytes = size === 0 || size > available ? available : size;
      return { pcm: readSamples(view, body, dataBytes, format.channels), sampleRate: format.sampleRate };
    }
    offset = body + size + (size % 2); // chunks are padded to even length
  }
  throw new WavFormatError(format ? 'WAV has no data chunk' : 'WAV has no fmt chunk');
}

function readSamples(view: DataView, start: number, byteLength: number, channels: number): Int16Array {
  const frames = Math.floor(byteLength / (2 * channels));
  const pcm = new Int16Array(frames);
  if (channels === 1) {
    for (let i = 0; i < frames; i++) pcm[i] = view.getInt16(start + 2 * i, true);
  } else {
    for (let i = 0; i < frames; i++) pcm[i] = (view.getInt16(start + 4 * i, true) + view.getInt16(start + 4 * i + 2, true)) >> 1;
  }
  return pcm;
}
