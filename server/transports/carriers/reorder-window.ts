// Telnyx documents that media frames may arrive out of order, numbered by sequence_number. A
// short window puts them back in order before the engine hears them: a frame that arrives early
// waits for the gap to fill, for at most `size` frames (60 ms at the default of 3), after which
// the gap is given up as lost. A frame older than what was already played is dropped: late audio
// played out of place sounds worse than a 20 ms hole.

export class ReorderWindow<T> {
  private next: number | null = null;
  private readonly held = new Map<number, T>();
  /** Frames that came after their turn had passed. */
  late = 0;
  /** Sequence numbers never seen when the window moved past them. */
  lost = 0;

  constructor(private readonly size = 3) {
    if (!Number.isInteger(size) || size < 0) throw new RangeError(`window size must be a whole number ≥ 0, got ${size}`);
  }

  /** Takes frame `sequence`; returns the frames now ready, in order. */
  push(sequence: number, frame: T): T[] {
    if (this.next === null) this.next = sequence;
    if (sequence < this.next || this.held.has(sequence)) {
      this.late++;
      return [];
    }
    this.held.set(sequence, frame);
    const ready: T[] = [];
    this.drain(ready);
    // Still waiting on a gap with more than `size` frames behind it: give the gap up.
    while (this.held.size > this.size) {
      const oldest = Math.min(...this.held.keys());
      this.lost += oldest - this.next!;
      this.next = oldest;
      this.drain(ready);
    }
    return ready;
  }

  /** Everything still held, in order (the stream ended). */
  flush(): T[] {
    const rest = [...this.held.entries()].sort((a, b) => a[0] - b[0]).map((entry) => entry[1]);
    this.held.clear();
    this.next = null;
    return rest;
  }

  private drain(ready: T[]): void {
    let next = this.next!;
    while (this.held.has(next)) {
      ready.push(this.held.get(next)!);
      this.held.delete(next);
      next++;
    }
    this.next = next;
  }
}
