// What the Talk tab says a session will cost before Talk: from the balance's per-part prices.
import { describe, expect, it } from 'vitest';
import { describePart, talkCost } from '../../../../renderer/src/features/talk/talk-cost.ts';
import type { CreditsView } from '../../../../renderer/src/lib/api-types.ts';

const balance = (cents: number, parts: CreditsView['parts']): CreditsView => ({
  balance_usd_cents: cents,
  rate_per_minute_usd_cents: 3,
  effective_rate_per_minute_usd_cents: parts ? Object.values(parts).reduce((sum, p) => sum + p.rate_per_minute_usd_cents, 0) : 3,
  parts,
});
const part = (provider: string, key_source: 'server' | 'account' | 'embedded' | 'none', cents: number) => ({ provider, key_source, rate_per_minute_usd_cents: cents });

describe('what a test session costs', () => {
  it('says each part with whose key serves it, and that speech-to-text is charged only once you speak', () => {
    const cost = talkCost(balance(200, { stt: part('deepgram', 'server', 1), llm: part('openai', 'server', 1), tts: part('flite', 'embedded', 0) }));
    expect(cost.headline).toBe('Up to 2¢/min');
    expect(cost.parts.map(describePart)).toEqual([
      'model 1¢ (server key), once the agent answers',
      'voice 0¢ (embedded)',
      'speech-to-text 1¢ (server key), only once you speak',
    ]);
    expect(cost).toMatchObject({ balanceCents: 200, minutesLeft: 100, refused: false });
  });

  it("prices a part on the account's own key at 0¢, and a session with nothing charged as free", () => {
    const cost = talkCost(balance(0, { stt: part('deepgram', 'account', 0), llm: part('openai', 'account', 0), tts: part('none', 'none', 0) }));
    expect(cost.headline).toBe('Free');
    expect(cost.parts.map(describePart)).toEqual(['model 0¢ (your key)', 'voice 0¢ (not available)', 'speech-to-text 0¢ (your key)']);
    // Nothing to pay: an empty balance refuses nothing.
    expect(cost).toMatchObject({ minutesLeft: null, refused: false });
  });

  it('says when the balance cannot pay a first minute', () => {
    const cost = talkCost(balance(2, { stt: part('deepgram', 'server', 1), llm: part('openai', 'server', 1), tts: part('openai', 'server', 1) }));
    expect(cost).toMatchObject({ headline: 'Up to 3¢/min', minutesLeft: 0, refused: true });
  });

  it('gives only the total when the server does not price the parts', () => {
    const cost = talkCost(balance(90, undefined));
    expect(cost).toMatchObject({ headline: 'Up to 3¢/min', parts: [], minutesLeft: 30 });
  });
});
