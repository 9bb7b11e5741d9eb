// Per-minute charging of a voice session (DESIGN §3): minute n is debited when it begins, with
// the idempotency key `session:<id>:minute:<n>`, so a retried debit never charges twice. When
// a minute cannot be paid the session is told and ended.
import type { CreditsRepository } from '../store/store.ts';

export interface MeterEvents {
  /** A minute could not be paid: the session must end. */
  onExhausted(balance: number): void;
  onError(error: unknown): void;
}

export class SessionMeter {
  private minute = 0;
  private charged = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** A debit under way; stop() waits for it so the session records what the ledger charged. */
  private inFlight: Promise<boolean> | null = null;

  constructor(
    private readonly credits: CreditsRepository,
    private readonly accountId: string,
    private readonly sessionId: string,
    /** Cents per minute for this session, fixed when it starts. */
    readonly ratePerMinute: number,
    private readonly events: MeterEvents,
    private readonly minuteMs = 60_000,
  ) {}

  get chargedCents(): number {
    return this.charged;
  }

  /** Charges the first minute; false when it cannot be paid (the session must not start). */
  async start(): Promise<boolean> {
    if (this.ratePerMinute === 0) return true;
    const paid = await this.chargeMinute();
    if (paid && !this.stopped) this.schedule();
    return paid;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight?.catch(() => false);
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.chargeMinute().then(
        (paid) => {
          if (this.stopped) return;
          if (paid) this.schedule();
        },
        (error: unknown) => this.events.onError(error),
      );
    }, this.minuteMs);
    this.timer.unref();
  }

  private chargeMinute(): Promise<boolean> {
    const charge = this.debitNextMinute();
    this.inFlight = charge;
    return charge;
  }

  private async debitNextMinute(): Promise<boolean> {
    const minute = this.minute++;
    const result = await this.credits.debit(this.accountId, this.ratePerMinute, {
      idempotencyKey: `session:${this.sessionId}:minute:${minute}`,
      sessionId: this.sessionId,
      reason: 'session_minute',
    });
    if (result.ok) {
      if (!result.duplicate) this.charged += this.ratePerMinute;
      return true;
    }
    if (!this.stopped) this.events.onExhausted(result.balance);
    return false;
  }
}
