// Per-minute charging of a voice session (docs/api.md), part by part: speech to text, the language
// model and text to speech each cost their price for every minute of the session from the minute
// the session first uses them, and nothing before. A typed-only session never pays for speech to
// text; a session whose caller starts speaking in minute 3 pays for it from minute 3 on. (Once in
// use, a part is charged every minute until the end, as a call minute is: a caller who pauses is
// still on the call.)
//
// Minute n is debited when it begins for the parts in use, with the idempotency key
// `session:<id>:minute:<n>`; a part first used during minute n is debited for that minute at
// once, with the key `session:<id>:minute:<n>:<part>`. So a retried debit never charges twice.
// When a debit cannot be paid the session is told and ended.
import type { ProviderKind } from '../providers/catalog.ts';
import type { CreditsRepository } from '../store/store.ts';

export interface MeterEvents {
  /** A minute could not be paid: the session must end. */
  onExhausted(balance: number): void;
  onError(error: unknown): void;
}

export type PartPrices = Readonly<Record<ProviderKind, number>>;

export class SessionMeter {
  private minute = 0;
  private charged = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly inUse = new Set<ProviderKind>();
  /** Debits under way; stop() waits for them so the session records what the ledger charged. */
  private readonly inFlight = new Set<Promise<boolean>>();
  private exhausted = false;

  constructor(
    private readonly credits: CreditsRepository,
    private readonly accountId: string,
    private readonly sessionId: string,
    /** Cents per minute of each part for this session, fixed when it starts. */
    readonly partPrices: PartPrices,
    private readonly events: MeterEvents,
    private readonly minuteMs = 60_000,
  ) {}

  /** What a minute costs with every part in use. */
  get ratePerMinute(): number {
    return this.partPrices.stt + this.partPrices.llm + this.partPrices.tts;
  }

  get chargedCents(): number {
    return this.charged;
  }

  /** Starts the minute clock. Nothing is in use yet, so nothing is charged; true (kept for the session's start check). */
  async start(): Promise<boolean> {
    if (!this.stopped) this.schedule();
    return true;
  }

  /**
   * The session uses a part now. Cheap when it is in use already (the audio path calls it for
   * every frame it sends to speech to text); the first time, the current minute is charged for it.
   */
  used(part: ProviderKind): void {
    if (this.stopped || this.inUse.has(part)) return;
    this.inUse.add(part);
    const price = this.partPrices[part];
    if (price > 0) this.debit(price, `session:${this.sessionId}:minute:${this.minute}:${part}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.all([...this.inFlight].map((debit) => debit.catch(() => false)));
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.stopped) return;
      this.minute++;
      let due = 0;
      for (const part of this.inUse) due += this.partPrices[part];
      if (due > 0) this.debit(due, `session:${this.sessionId}:minute:${this.minute}`);
      if (!this.exhausted) this.schedule();
    }, this.minuteMs);
    this.timer.unref();
  }

  private debit(cents: number, idempotencyKey: string): void {
    const debit = this.credits.debit(this.accountId, cents, { idempotencyKey, sessionId: this.sessionId, reason: 'session_minute' }).then((result) => {
      if (result.ok) {
        if (!result.duplicate) this.charged += cents;
        return true;
      }
      if (!this.stopped && !this.exhausted) {
        this.exhausted = true;
        if (this.timer) clearTimeout(this.timer);
        this.events.onExhausted(result.balance);
      }
      return false;
    });
    this.inFlight.add(debit);
    debit.then(
      () => this.inFlight.delete(debit),
      (error: unknown) => {
        this.inFlight.delete(debit);
        this.events.onError(error);
      },
    );
  }
}
