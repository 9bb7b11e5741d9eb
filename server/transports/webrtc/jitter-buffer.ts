// Puts incoming RTP packets back in order, holding at most `maxDelayPackets` (three 20 ms Opus
// packets = 60 ms; werift's own default would hold 200 ms, which a conversation feels). A packet
// that arrives after its turn has passed is dropped; a gap is reported so the decoder can
// conceal it.

export interface JitterOutput<T> {
  /** Packets in sequence order; `null` stands for one lost packet. */
  (packet: T | null): void;
}

const SEQ_MOD = 65_536;
/** Sequence distance past which a packet means a new stream, not a late or early one. */
const RESTART_DISTANCE = 1_000;

/** Distance from a to b in 16-bit sequence space, negative when b is before a. */
function seqDelta(a: number, b: number): number {
  const d = (b - a + SEQ_MOD) % SEQ_MOD;
  return d >= SEQ_MOD / 2 ? d - SEQ_MOD : d;
}

export class JitterBuffer<T> {
  private readonly held = new Map<number, T>();
  private next: number | null = null;

  constructor(
    private readonly output: JitterOutput<T>,
    private readonly maxDelayPackets = 3,
  ) {}

  push(sequenceNumber: number, packet: T): void {
    if (this.next === null) this.next = sequenceNumber;
    const ahead = seqDelta(this.next, sequenceNumber);
    if (Math.abs(ahead) > RESTART_DISTANCE) {
      // Far from where we are, in either direction: the sender restarted or jumped. Start over
      // from here rather than drop every packet that follows as "late".
      this.held.clear();
      this.next = sequenceNumber;
    } else if (ahead < 0 || this.held.has(sequenceNumber)) {
      return; // late or duplicate
    }
    this.held.set(sequenceNumber, packet);
    this.drain();
  }

  private drain(): void {
    for (;;) {
      const next = this.next!;
      const packet = this.held.get(next);
      if (packet !== undefined) {
        this.held.delete(next);
        this.output(packet);
        this.next = (next + 1) % SEQ_MOD;
        continue;
      }
      // Waiting for `next`; give up on it once later packets would be held too long.
      if (this.held.size < this.maxDelayPackets) return;
      this.output(null);
      this.next = (next + 1) % SEQ_MOD;
    }
  }
}
