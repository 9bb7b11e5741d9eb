// A phone call's audio between the carrier's media stream and the voice engine. The carrier
// speaks 8 kHz G.711 (μ-law, or A-law where it offers it) in frames of 20 ms; the engine speaks
// PCM16 at 16 kHz. Caller audio is decoded and resampled up before the engine's VAD hears it;
// each paced 20 ms frame of agent speech is resampled down, encoded and sent as one media
// message, so the carrier's buffer never holds more than the engine's small lead.
//
// What the caller heard: the engine paces speech in real time and a barge-in records as spoken
// only what it had sent, as on WebRTC. The carrier also buffers what it was sent, so on
// `interrupted` the bridge sends the carrier's `clear` (its buffer is dropped at once) and, at
// the end of every reply, a `mark` whose echo says the caller heard it to the end.
//
// A recorded call is recorded here, as it was on the line: 8 kHz, both sides G.711 decoded to
// PCM16 (the caller's frames as they came, the agent's as they were encoded and sent), not the
// engine's 16 kHz.
import type { LineRecordingTap } from '../../engine/session-setup.ts';
import { StreamingResampler } from '../../audio/resampler.ts';
import type { ServerEvent } from '../../protocol/events.ts';
import { decodeG711, encodeG711, type G711Law } from '../../audio/g711.ts';

export const CARRIER_RATE = 8000;
const ENGINE_RATE = 16000;

/** The messages a carrier's stream takes from us, as that carrier spells them. */
export interface StreamMessages {
  media(payload: Uint8Array): string;
  mark(name: string): string;
  clear(): string;
}

export interface MediaBridgeCounters {
  framesIn: number;
  framesOut: number;
  /** Frames that could not be used (a bad payload, an unknown codec): counted, skipped. */
  malformed: number;
  marksSent: number;
  marksEchoed: number;
}

export class PhoneMediaBridge {
  private readonly up = new StreamingResampler(CARRIER_RATE, ENGINE_RATE);
  private readonly down = new StreamingResampler(ENGINE_RATE, CARRIER_RATE);
  private replies = 0;
  private recording: LineRecordingTap | null = null;
  readonly counters: MediaBridgeCounters = { framesIn: 0, framesOut: 0, malformed: 0, marksSent: 0, marksEchoed: 0 };

  constructor(
    private readonly law: G711Law,
    private readonly messages: StreamMessages,
    private readonly send: (text: string) => void,
  ) {}

  /** A media frame from the carrier: the engine's 16 kHz PCM, or null when the payload is unusable. */
  callerAudio(payload: Uint8Array): Int16Array | null {
    if (payload.length === 0 || payload.length > 8000) {
      this.counters.malformed++;
      return null;
    }
    this.counters.framesIn++;
    const narrow = decodeG711(this.law, payload);
    this.recording?.caller(narrow);
    return this.up.process(narrow);
  }

  /** One paced 20 ms frame of the agent's voice from the engine. */
  agentAudio(frame: Int16Array): void {
    const narrow = this.down.process(frame);
    if (narrow.length === 0) return;
    this.counters.framesOut++;
    const encoded = encodeG711(this.law, narrow);
    // What the caller hears is the encoded frame, so that is what is recorded.
    this.recording?.agent(decodeG711(this.law, encoded));
    this.send(this.messages.media(encoded));
  }

  /** Records the call from here on, both sides as on the line (8 kHz). */
  record(tap: LineRecordingTap): void {
    this.recording = tap;
  }

  /** Sees every event the session sends; a barge-in drops what the carrier still holds. */
  event(event: ServerEvent): void {
    if (event.type === 'interrupted') {
      this.send(this.messages.clear());
      // What was cut is gone: the next reply starts from a clean filter state too.
      this.down.reset();
    } else if (event.type === 'agent_stopped_speaking') {
      this.counters.marksSent++;
      this.send(this.messages.mark(`reply-${++this.replies}`));
    }
  }

  /** The carrier played everything sent before this mark. */
  markEchoed(): void {
    this.counters.marksEchoed++;
  }
}

/**
 * One direction of a phone line, heard locally: 16 kHz PCM down to the carrier's 8 kHz, through
 * G.711 and back up, exactly as a call's audio goes through PhoneMediaBridge. The studio's
 * test-talk uses it (`phone_line=1`) so a designer hears what callers will hear.
 */
class LineDirection {
  private readonly down = new StreamingResampler(ENGINE_RATE, CARRIER_RATE);
  private readonly up = new StreamingResampler(CARRIER_RATE, ENGINE_RATE);

  constructor(private readonly law: G711Law) {}

  /** As much narrowed audio as the filters have let through so far (a few ms less at first). */
  process(pcm: Int16Array): Int16Array {
    const narrow = this.down.process(pcm);
    if (narrow.length === 0) return new Int16Array(0);
    return this.up.process(decodeG711(this.law, encodeG711(this.law, narrow)));
  }

  reset(): void {
    this.down.reset();
    this.up.reset();
  }
}

/**
 * A phone line for a session that is not a phone call: the caller's audio and the agent's each
 * go through 8 kHz G.711 and back, so what is heard on both sides is what a call would carry.
 * The agent's paced frames keep their length (a transport sends them as they are): the line's
 * output waits one frame behind, padded with silence until the filters fill, which adds 20 ms.
 */
export class PhoneLine {
  private readonly caller: LineDirection;
  private readonly agent: LineDirection;
  /** The agent's narrowed audio not sent yet; starts one frame deep. */
  private held: Int16Array = new Int16Array(0);
  private primed = false;

  constructor(law: G711Law = 'mulaw') {
    this.caller = new LineDirection(law);
    this.agent = new LineDirection(law);
  }

  /** Caller audio of any length, as the engine will hear it. */
  callerAudio(pcm: Int16Array): Int16Array {
    return this.caller.process(pcm);
  }

  /** One paced frame of the agent's voice, as the caller will hear it: the same length. */
  agentFrame(frame: Int16Array): Int16Array {
    if (!this.primed) {
      this.primed = true;
      this.held = new Int16Array(frame.length);
    }
    const narrowed = this.agent.process(frame);
    const all = new Int16Array(this.held.length + narrowed.length);
    all.set(this.held);
    all.set(narrowed, this.held.length);
    const out = new Int16Array(frame.length);
    out.set(all.subarray(0, frame.length));
    this.held = all.slice(Math.min(frame.length, all.length));
    return out;
  }

  /**
   * A reply is over (its end, or a barge-in): what is still held of it (its last 20 ms, silence
   * unless it was cut) is dropped, so the next reply does not start with the end of this one.
   */
  replyOver(): void {
    this.agent.reset();
    this.held = new Int16Array(0);
    this.primed = false;
  }
}
