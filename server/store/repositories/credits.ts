// The credit ledger: append-only rows of signed cent amounts; a balance is their sum. Every
// row carries a unique idempotency key, so a retried grant or a replayed per-minute debit can
// never count twice.

export type DebitResult =
  | { ok: true; balance: number; duplicate: boolean }
  | { ok: false; balance: number };

export interface GrantResult {
  balance: number;
  duplicate: boolean;
}

export interface DebitOptions {
  /** One key per charge, e.g. `session:<id>:minute:<n>`; a repeat returns the first outcome. */
  idempotencyKey: string;
  sessionId?: string | null;
  reason?: string;
}

export interface CreditsRepository {
  grant(accountId: string, cents: number, reason: string, idempotencyKey: string): Promise<GrantResult>;
  /**
   * Charges `cents` unless that would take the balance below zero. A refusal writes nothing, so
   * the same key may succeed later once the balance allows it.
   */
  debit(accountId: string, cents: number, options: DebitOptions): Promise<DebitResult>;
  /** Integer cents, never negative. */
  balance(accountId: string): Promise<number>;
}
