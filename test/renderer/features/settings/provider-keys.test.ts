import { describe, expect, it } from 'vitest';
import { describeKeyState, initialVendor, keyState } from '../../../../renderer/src/features/settings/provider-keys.ts';
import type { ProvidersView } from '../../../../renderer/src/lib/api-types.ts';

const view = (changes: Partial<ProvidersView>): ProvidersView => ({
  stt_provider: 'none',
  stt_api_key: null,
  llm_provider: 'none',
  llm_api_key: null,
  tts_provider: 'flite',
  tts_api_key: null,
  ...changes,
});

describe('the provider keys section', () => {
  it("says whose key serves each part, and so whether it is charged", () => {
    expect(describeKeyState(keyState(view({ llm_provider: 'openai', llm_api_key: 'sk-…abcd' }), 'llm'))).toMatch(/your key.*not charged/i);
    expect(describeKeyState(keyState(view({ llm_provider: 'openai' }), 'llm'))).toMatch(/server's key.*credits/i);
    expect(describeKeyState(keyState(view({}), 'tts'))).toMatch(/built in.*free/i);
    expect(keyState(view({}), 'stt')).toEqual({ kind: 'unavailable' });
  });

  it('starts the vendor select on the vendor in use, or the default one when none is', () => {
    expect(initialVendor(view({ stt_provider: 'openai' }), 'stt')).toBe('openai');
    expect(initialVendor(view({}), 'stt')).toBe('deepgram');
    expect(initialVendor(view({}), 'tts')).toBe('flite');
  });
});
