// Call recordings (docs/api.md#what-a-call-leaves-behind): stereo WAV, PCM16, the caller on the
// left and the agent on the right, as each was heard: the caller's audio as it arrived, the
// agent's as it was sent (a reply cut by a barge-in stops where it was cut). At the engine's
// 16 kHz, or for a phone call at the line's 8 kHz (docs/phone-calls.md).
//
// Off the audio path: caller() and agent() only place a frame on its track (a copy of 640
// bytes at 16 kHz); a timer every FLUSH_MS mixes what is older than MIX_DELAY_MS into
// interleaved stereo and appends it to the file asynchronously. A crash loses at most the last second or so; the
// WAV header's sizes are written at the end, and a file cut short by a crash still plays (its
// header claims the longest size a WAV can, which players read as "to the end of the file").
//
// WAV and not Ogg Opus: it needs no encoder on the server's threads and no muxer dependency; a
// 16 kHz stereo PCM16 call costs 64 KB/s (230 MB an hour) of disk, an 8 kHz phone call 32 KB/s.
// Ogg Opus would be ~15× smaller.
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

const FLUSH_MS = 1_000;
/** Audio younger than this may still be joined by the other track's late frames. */
const MIX_DELAY_MS = 300;
/** A frame that arrives within this of where its track's previous frame ended continues it. */
const SNAP_MS = 60;
const HEADER_BYTES = 44;

interface Placed {
  at: number;
  pcm: Int16Array;
}

class Track {
  readonly chunks: Placed[] = [];
  private end = -1;

  constructor(private readonly rate: number) {}

  /** Places a frame at `position` (samples since the start), or right after the last one if close. */
  place(position: number, pcm: Int16Array): void {
    const at = this.end >= 0 && Math.abs(position - this.end) <= (SNAP_MS * this.rate) / 1000 ? this.end : position;
    this.chunks.push({ at, pcm: pcm.slice() });
    this.end = at + pcm.length;
  }

  /** Copies samples in [from, to) into `out` at channel `channel` of interleaved stereo, then drops what is done. */
  mixInto(out: Int16Array, from: number, to: number, channel: 0 | 1): void {
    for (const { at, pcm } of this.chunks) {
      const start = Math.max(at, from);
      const stop = Math.min(at + pcm.length, to);
      for (let s = start; s < stop; s++) out[(s - from) * 2 + channel] = pcm[s - at]!;
    }
    let done = 0;
    while (done < this.chunks.length && this.chunks[done]!.at + this.chunks[done]!.pcm.length <= to) done++;
    this.chunks.splice(0, done);
  }
}

function wavHeader(dataBytes: number, rate: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(Math.min(0xffffffff, 36 + dataBytes), 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(2, 22); // stereo
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 4, 28);
  header.writeUInt16LE(4, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(Math.min(0xffffffff - 36, dataBytes), 40);
  return header;
}

export interface RecordingLog {
  error(object: Record<string, unknown>, message: string): void;
}

/** One call being recorded. */
export class CallRecording {
  private readonly caller: Track;
  private readonly agent: Track;
  private readonly startedMs = performance.now();
  /** Samples already written. */
  private written = 0;
  private readonly handle: Promise<FileHandle | null>;
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  readonly path: string;

  constructor(
    dir: string,
    readonly file: string,
    private readonly log: RecordingLog,
    /** Samples a second: the engine's 16 kHz, or a phone line's 8 kHz. */
    readonly sampleRate = 16_000,
  ) {
    this.caller = new Track(sampleRate);
    this.agent = new Track(sampleRate);
    const path = (this.path = join(dir, file));
    this.handle = mkdir(dir, { recursive: true, mode: 0o700 }).then(() => open(path, 'w', 0o600)).then(
      async (handle) => {
        await handle.write(wavHeader(0xffffffff, sampleRate));
        return handle;
      },
      (error: unknown) => {
        this.log.error({ err: error, file: path }, 'could not start a recording');
        return null;
      },
    );
    this.timer = setInterval(() => this.flush(false), FLUSH_MS);
    this.timer.unref();
  }

  /** A frame of the caller's audio, as it arrived. */
  callerAudio(pcm: Int16Array): void {
    if (!this.closed) this.caller.place(this.nowSamples(), pcm);
  }

  /** A frame of the agent's audio, as it was sent. */
  agentAudio(pcm: Int16Array): void {
    if (!this.closed) this.agent.place(this.nowSamples(), pcm);
  }

  /** Writes the rest and the header's sizes; resolves once the file is complete. */
  async close(): Promise<void> {
    if (this.closed) return this.writing;
    this.closed = true;
    clearInterval(this.timer);
    this.flush(true);
    this.writing = this.writing.then(async () => {
      const handle = await this.handle;
      if (!handle) return;
      try {
        await handle.write(wavHeader(this.written * 4, this.sampleRate), 0, HEADER_BYTES, 0);
      } finally {
        await handle.close();
      }
    });
    return this.writing.catch((error: unknown) => this.log.error({ err: error, file: this.path }, 'could not finish a recording'));
  }

  private nowSamples(): number {
    return Math.round(((performance.now() - this.startedMs) * this.sampleRate) / 1000);
  }

  private flush(all: boolean): void {
    const upto = all ? Math.max(this.trackEnd(this.caller), this.trackEnd(this.agent), this.written) : this.nowSamples() - (MIX_DELAY_MS * this.sampleRate) / 1000;
    if (upto <= this.written) return;
    const from = this.written;
    const stereo = new Int16Array((upto - from) * 2);
    this.caller.mixInto(stereo, from, upto, 0);
    this.agent.mixInto(stereo, from, upto, 1);
    this.written = upto;
    const bytes = Buffer.from(stereo.buffer, stereo.byteOffset, stereo.byteLength);
    const at = HEADER_BYTES + from * 4;
    this.writing = this.writing.then(async () => {
      const handle = await this.handle;
      if (handle) await handle.write(bytes, 0, bytes.length, at);
    }).catch((error: unknown) => this.log.error({ err: error, file: this.path }, 'could not write part of a recording'));
  }

  private trackEnd(track: Track): number {
    const last = track.chunks.at(-1);
    return last ? last.at + last.pcm.length : 0;
  }
}

/** Starts recording a session into the data folder's private recordings/ folder. */
export function startRecording(dataDir: string, sessionId: string, log: RecordingLog, sampleRate?: number): CallRecording {
  return new CallRecording(join(dataDir, 'recordings'), `${sessionId}.wav`, log, sampleRate);
}

/** A recording's WAV as it can be sent now: its header, and the bytes from the file it covers. */
export interface WavToSend {
  /** The file's header with its sizes set to the whole sample frames the file holds now. */
  header: Buffer;
  /** Bytes to send: the header and those frames (a live recording's last frame may be half written). */
  size: number;
}

/**
 * Reads a recording's header to send it with a file of `size` bytes, which may still be being
 * written: a live recording's header claims the longest size a WAV can until the call ends, so a
 * download mid-call would otherwise be a WAV whose header does not match its length. 'starting':
 * the file is younger than its header (created a moment ago). null: not a WAV written here.
 */
export async function wavToSend(path: string, size: number): Promise<WavToSend | 'starting' | null> {
  if (size < HEADER_BYTES) return 'starting';
  const handle = await open(path, 'r');
  const header = Buffer.alloc(HEADER_BYTES);
  try {
    const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
    if (bytesRead < HEADER_BYTES) return 'starting';
  } finally {
    await handle.close();
  }
  const frameBytes = header.readUInt16LE(32);
  const ours = header.toString('latin1', 0, 4) === 'RIFF' && header.toString('latin1', 8, 16) === 'WAVEfmt ' && header.toString('latin1', 36, 40) === 'data' && frameBytes > 0;
  if (!ours) return null;
  const dataBytes = Math.min(0xffffffff - 36, Math.floor((size - HEADER_BYTES) / frameBytes) * frameBytes);
  header.writeUInt32LE(36 + dataBytes, 4);
  header.writeUInt32LE(dataBytes, 40);
  return { header, size: HEADER_BYTES + dataBytes };
}
