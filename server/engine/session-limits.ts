// The limits that end a session by themselves: its longest duration (`max_duration`) and a
// silence nobody breaks (`idle`). Activity on the audio path only writes a number here; the one
// idle timer reads it when it fires and moves itself on.
export type LimitReason = 'max_duration' | 'idle';

export interface SessionLimitsOptions {
  /** The longest the session lasts. 0 or absent: no limit. */
  maxDurationMs?: number;
  /** Idle this long, the session ends. 0 or absent: never. */
  idleEndMs?: number;
}

export class SessionLimits {
  /** When the caller last spoke or the client last sent a message (performance.now). */
  #lastActivityAt = performance.now();
  #durationTimer: NodeJS.Timeout | null = null;
  #idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: SessionLimitsOptions,
    private readonly isEnded: () => boolean,
    private readonly end: (reason: LimitReason) => void,
  ) {}

  get lastActivityAt(): number {
    return this.#lastActivityAt;
  }

  noteActivity(): void {
    this.#lastActivityAt = performance.now();
  }

  /** Starts both clocks, at the session's start. */
  watch(): void {
    const { maxDurationMs = 0, idleEndMs = 0 } = this.options;
    if (this.isEnded()) return;
    if (maxDurationMs > 0) this.#durationTimer = setTimeout(() => this.end('max_duration'), maxDurationMs);
    if (idleEndMs <= 0) return;
    // One timer, moved on lazily when it fires: activity on the audio path only writes a number.
    const checkIdle = () => {
      if (this.isEnded()) return;
      const quietFor = performance.now() - this.#lastActivityAt;
      if (quietFor >= idleEndMs) this.end('idle');
      else this.#idleTimer = setTimeout(checkIdle, idleEndMs - quietFor);
    };
    this.#idleTimer = setTimeout(checkIdle, idleEndMs);
  }

  /** The session is ending: neither limit fires any more. */
  stop(): void {
    if (this.#durationTimer) clearTimeout(this.#durationTimer);
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
  }
}
