// What voice costs (docs/api.md): new accounts get 200 cents; a minute is 3 cents, 1 for each
// part (speech to text, model, voice) served on the server's key. A part served by the
// account's own key, by an embedded provider, or by nothing costs 0.
import type { ProviderKind } from '../providers/catalog.ts';

export const SIGNUP_CREDIT_CENTS = 200;
export const RATE_PER_MINUTE_CENTS = 3;
export const PART_PRICE_CENTS: Record<ProviderKind, number> = { stt: 1, llm: 1, tts: 1 };
