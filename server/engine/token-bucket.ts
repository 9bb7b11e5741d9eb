// A token bucket: `burst` tokens at most, refilled at `perSecond`. A client may do a few things
// at once and then keeps to the sustained rate; what it did not use while quiet stays available
// up to the burst.

export interface TokenBucketOptions {
  burst: number;
  perSecond: number;
  now?: () => number;
}

export class TokenBucket {
  private tokens: number;
  private refilledAt: number;
  private readonly now: () => number;

  constructor(private readonly options: TokenBucketOptions) {
    this.now = options.now ?? (() => performance.now());
    this.tokens = options.burst;
    this.refilledAt = this.now();
  }

  /** Takes one token; false (and nothing taken) when the bucket is empty. */
  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.options.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.options.perSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
