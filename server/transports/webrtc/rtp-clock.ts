// RTP timestamps for the agent's voice. The engine sends 20 ms frames up to its lead (AudioOut's
// OUTPUT_LEAD_MS) before they play, so the wall-clock spacing of sends is not the spacing of the
// audio: a frame continues the talkspurt (timestamp + 960, Opus's 48 kHz clock) unless it leaves
// after the moment it would have played. Then the caller heard a gap (the agent was silent
// between replies, or a stall outlasted the lead): the timestamp jumps by the time that passed
// since the last frame played, so the receiver's jitter buffer keeps its timing, and the marker
// bit says a talkspurt begins (RFC 3551 §4.1).
const FRAME_MS = 20;
const CLOCK_PER_MS = 48;
/** The clock is read a moment after AudioOut read it for the same frame. */
const SLACK_MS = 1;

export class RtpClock {
  /** When the last frame sent plays at the receiver, on our clock (null before the first). */
  private lastPlayAt: number | null = null;

  constructor(private timestamp: number) {}

  /** The timestamp and marker bit of the frame sent at `now` (ms). */
  next(now: number): { timestamp: number; marker: boolean } {
    if (this.lastPlayAt !== null && now <= this.lastPlayAt + FRAME_MS + SLACK_MS) {
      this.lastPlayAt += FRAME_MS;
      this.timestamp = (this.timestamp + FRAME_MS * CLOCK_PER_MS) >>> 0;
      return { timestamp: this.timestamp, marker: false };
    }
    if (this.lastPlayAt !== null) this.timestamp = (this.timestamp + Math.round((now - this.lastPlayAt) * CLOCK_PER_MS)) >>> 0;
    this.lastPlayAt = now;
    return { timestamp: this.timestamp, marker: true };
  }
}
