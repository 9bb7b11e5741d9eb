// Places in a capped pool (live voice sessions, WebRTC peers), counted the moment they are
// asked for. A cap checked against the live set and filled only after some awaits (a database
// write, an upgrade, an SDP answer) lets every admission in flight pass the same check: the
// issue measured 105 sessions against a cap of 100. Here the check and the count are one
// synchronous step, and the place is given back exactly once, whoever gives it back.

/** A place taken in a pool; released once (later calls do nothing). */
export interface Slot {
  readonly released: boolean;
  release(): void;
}

export type SlotRefusal = 'full' | 'owner_full';

export interface SlotPoolOptions {
  /** Places in the whole pool. */
  total: number;
  /** Places one owner (an account) may hold at once; Infinity for no limit. */
  perOwner?: number;
}

export class SlotPool {
  private taken = 0;
  private readonly byOwner = new Map<string, number>();

  constructor(private readonly options: SlotPoolOptions) {}

  private heldBy(owner: string): number {
    return this.byOwner.get(owner) ?? 0;
  }

  /**
   * Takes a place for `owner`, or says why not. The owner's own limit is checked first: an
   * account at its limit learns that it is, whether or not the server is full too.
   */
  take(owner: string): Slot | SlotRefusal {
    const held = this.heldBy(owner);
    if (held >= (this.options.perOwner ?? Infinity)) return 'owner_full';
    if (this.taken >= this.options.total) return 'full';
    this.taken++;
    this.byOwner.set(owner, held + 1);
    let released = false;
    return {
      get released() {
        return released;
      },
      release: () => {
        if (released) return;
        released = true;
        this.taken--;
        const left = this.heldBy(owner) - 1;
        if (left > 0) this.byOwner.set(owner, left);
        else this.byOwner.delete(owner);
      },
    };
  }
}
