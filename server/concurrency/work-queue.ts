// Runs at most `concurrency` jobs at once and lets at most `maxWaiting` wait. Used for work that
// is heavy on CPU (password hashing) so a burst of logins cannot starve real-time audio.

export class QueueFullError extends Error {
  override name = 'QueueFullError';
}

export class WorkQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxWaiting: number,
  ) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting) throw new QueueFullError('too many jobs waiting');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await job();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
