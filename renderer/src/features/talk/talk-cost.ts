// What a test session will cost, said before Talk (docs/providers.md): the most a minute can cost,
// each part's price with whose key serves it, and when each part starts to be charged, with the
// account's balance and the minutes it pays for. From GET /v1/credits/balance, whose `parts` are
// the server's own pricing (billing/provider-choice.ts), so the studio never guesses a price.
//
// When a part is charged follows billing/metering.ts: a part costs its price from the minute the
// session first uses it. The model runs for the agent's first answer and the voice speaks it, so
// both are charged from the first minute in a session that opens with the agent speaking; speech
// to text only once the caller speaks — a typed-only session never pays for it. So the figure is
// "up to": the rate with every part in use.
import type { CreditPart, CreditsView, ProviderKind } from '../../lib/api-types.ts';

export interface CostPart {
  kind: ProviderKind;
  /** "model", "voice", "speech-to-text". */
  label: string;
  cents: number;
  /** Why it costs what it does: "server key", "your key", "embedded", "not available". */
  source: string;
  /** When it starts to be charged; null when it is free. */
  when: string | null;
}

export interface TalkCost {
  /** The most a minute costs, with every part in use. */
  ratePerMinute: number;
  /** "Up to 3¢/min", or "Free" when no part is charged. */
  headline: string;
  parts: CostPart[];
  balanceCents: number;
  /** Whole minutes the balance pays at the full rate; null when nothing is charged. */
  minutesLeft: number | null;
  /** The balance cannot pay a first minute: the server refuses the session (402). */
  refused: boolean;
}

// The order a designer meets them in a session: the agent answers and speaks, then hears you.
const PARTS: ReadonlyArray<{ kind: ProviderKind; label: string; when: string }> = [
  { kind: 'llm', label: 'model', when: 'once the agent answers' },
  { kind: 'tts', label: 'voice', when: 'once the agent speaks' },
  { kind: 'stt', label: 'speech-to-text', when: 'only once you speak' },
];

const SOURCES: Record<CreditPart['key_source'], string> = {
  server: 'server key',
  account: 'your key',
  embedded: 'embedded',
  none: 'not available',
};

export function talkCost(credits: CreditsView): TalkCost {
  const rate = credits.effective_rate_per_minute_usd_cents;
  const parts = PARTS.map(({ kind, label, when }): CostPart => {
    const part = credits.parts?.[kind];
    // A server before per-part prices: only the total is known.
    if (!part) return { kind, label, cents: 0, source: 'price not said by this server', when: null };
    const cents = part.rate_per_minute_usd_cents;
    return { kind, label, cents, source: SOURCES[part.key_source], when: cents > 0 ? when : null };
  });
  return {
    ratePerMinute: rate,
    headline: rate > 0 ? `Up to ${rate}¢/min` : 'Free',
    parts: credits.parts ? parts : [],
    balanceCents: credits.balance_usd_cents,
    minutesLeft: rate > 0 ? Math.floor(credits.balance_usd_cents / rate) : null,
    refused: rate > 0 && credits.balance_usd_cents < rate,
  };
}

/** One part as a line reads it: "model 1¢ (server key), once the agent answers". */
export function describePart(part: CostPart): string {
  return `${part.label} ${part.cents}¢ (${part.source})${part.when ? `, ${part.when}` : ''}`;
}
