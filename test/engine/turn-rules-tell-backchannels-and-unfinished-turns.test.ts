import { describe, expect, it } from 'vitest';
import {
  BACKCHANNEL_MAX_MS,
  DEFAULT_TURN_POLICY,
  decideEndOfTurn,
  isBackchannel,
  isBaselinePolicy,
  judgeBargeIn,
  NO_HINTS,
  shortestWaitMs,
  type TurnHints,
  type TurnPolicy,
} from '../../server/engine/turn-rules.ts';

const policy: TurnPolicy = { ...DEFAULT_TURN_POLICY, endpointingMs: 500, maxEndpointingMs: 1_500 };
const baseline: TurnPolicy = { minInterruptionWords: 0, backchannels: 'interrupt', endpointingMs: 500, maxEndpointingMs: 500 };

describe('backchannels', () => {
  it.each(['uh-huh', 'Uh huh.', 'mm-hmm', 'Mhm', 'yeah', 'Yeah, okay.', 'right', 'sure', 'I see', 'okay, got it', 'all right'])('"%s" is a backchannel in English', (text) => {
    expect(isBackchannel(text, 'en-US')).toBe(true);
  });

  it.each(['wait', 'wait, no, Tuesday', 'yeah but on Tuesday', 'stop', 'no', 'hold on', 'I see what you mean but no'])('"%s" is not', (text) => {
    expect(isBackchannel(text, 'en')).toBe(false);
  });

  it('has tables for other languages, and none for a language it does not know', () => {
    expect(isBackchannel('Ja, genau.', 'de-DE')).toBe(true);
    expect(isBackchannel('Nein, am Dienstag', 'de')).toBe(false);
    expect(isBackchannel("d'accord", 'fr')).toBe(true);
    expect(isBackchannel('vale', 'es-ES')).toBe(true);
    expect(isBackchannel('hai', 'ja')).toBeNull();
  });
});

describe('barge-in over the agent', () => {
  const judge = (transcript: string | null, durationMs: number, ended: boolean, p: TurnPolicy = policy, language = 'en') =>
    judgeBargeIn({ transcript, durationMs, ended, language }, p);

  it('ignores a backchannel, however it ends, and resumes after speech with no words', () => {
    expect(judge('uh-huh', 400, true)).toEqual({ decision: 'ignored_backchannel', reason: 'backchannel' });
    expect(judge('yeah', 300, false)).toBeNull();
    expect(judge('', 250, true)).toEqual({ decision: 'resumed', reason: 'no_words' });
    expect(judge(null, 250, true)).toEqual({ decision: 'resumed', reason: 'no_words' });
  });

  it('interrupts on real words, or on long speech before any transcript', () => {
    expect(judge('wait, no, Tuesday', 600, true)).toEqual({ decision: 'interrupted', reason: 'words' });
    expect(judge('wait', 200, false)).toEqual({ decision: 'interrupted', reason: 'words' });
    expect(judge(null, BACKCHANNEL_MAX_MS - 1, false)).toBeNull();
    expect(judge(null, BACKCHANNEL_MAX_MS, false)).toEqual({ decision: 'interrupted', reason: 'duration' });
  });

  it('waits while streamed words may still become a backchannel ("I" of "I see")', () => {
    expect(judge('Yeah, I', 300, false)).toBeNull();
    expect(judge('All', 200, false)).toBeNull();
    expect(judge('I', 200, true)).toEqual({ decision: 'interrupted', reason: 'words' });
    expect(judge('I want', 400, false)).toEqual({ decision: 'interrupted', reason: 'words' });
    expect(judge('Yeah, I see', 500, true)).toEqual({ decision: 'ignored_backchannel', reason: 'backchannel' });
  });

  it('counts words against the minimum', () => {
    const three = { ...policy, minInterruptionWords: 3 };
    expect(judge('no stop', 500, true, three)).toEqual({ decision: 'ignored_backchannel', reason: 'too_few_words' });
    expect(judge('no stop', 500, false, three)).toBeNull();
    expect(judge('no stop now', 500, false, three)).toEqual({ decision: 'interrupted', reason: 'words' });
  });

  it('treats a backchannel as words with backchannels: interrupt', () => {
    expect(judge('uh-huh', 400, true, { ...policy, backchannels: 'interrupt' })).toEqual({ decision: 'interrupted', reason: 'words' });
  });

  it('judges a language with no table by duration', () => {
    expect(judge('hai', 400, true, policy, 'ja')).toEqual({ decision: 'ignored_backchannel', reason: 'short' });
    expect(judge('chotto matte kudasai', BACKCHANNEL_MAX_MS + 100, false, policy, 'ja')).toEqual({ decision: 'interrupted', reason: 'duration' });
  });

  it('knows the baseline policy', () => {
    expect(isBaselinePolicy(baseline)).toBe(true);
    expect(isBaselinePolicy(policy)).toBe(false);
    expect(isBaselinePolicy({ ...baseline, maxEndpointingMs: 900 })).toBe(false);
  });
});

describe('end of turn', () => {
  const yesNo: TurnHints = { ...NO_HINTS, yesNo: true };
  const days: TurnHints = { ...NO_HINTS, enumValues: ['monday', 'tuesday', 'next week'] };
  const wait = (text: string, hints: TurnHints = NO_HINTS, p: TurnPolicy = policy, language = 'en') => decideEndOfTurn(text, language, hints, p);

  it.each([
    "I'd like to book a table on",
    'I want to come in and',
    'my number is five five five',
    'the code is 4 2',
    'um',
    'Let me think, uh',
    'I would like a',
    'book it for the',
    "because",
    'Can I book it for Tuesday or',
  ])('waits the longest after "%s"', (text) => {
    expect(wait(text)).toEqual({ waitMs: 1_500, reason: 'unfinished' });
  });

  it.each(["I'd like to book a table on Tuesday.", 'That is all, thank you.', 'What time do you open?', 'Yes, for four people'])('waits the base after "%s"', (text) => {
    expect(wait(text)).toEqual({ waitMs: 500, reason: 'default' });
  });

  it('ends a short answer to the state\'s question sooner', () => {
    expect(wait('Yes.', yesNo)).toEqual({ waitMs: shortestWaitMs(policy), reason: 'short_answer' });
    expect(wait('no thanks', yesNo).reason).toBe('short_answer');
    expect(wait('Tuesday', days).reason).toBe('short_answer');
    expect(wait('next week', days).reason).toBe('short_answer');
    expect(wait('42', { ...NO_HINTS, number: true }).reason).toBe('short_answer');
    expect(shortestWaitMs(policy)).toBeLessThan(policy.endpointingMs);
    // Not asked by the state's tools: a yes/no or a number of a word or two is still a short
    // answer (a prompt asks questions too); longer ones only when the state asks yes/no.
    expect(wait('yes').reason).toBe('short_answer');
    expect(wait('Yes please').reason).toBe('short_answer');
    expect(wait('seven').reason).toBe('short_answer');
    expect(wait('no thank you').reason).toBe('default');
    expect(wait('no thank you', yesNo).reason).toBe('short_answer');
    expect(wait('Wednesday', days).reason).toBe('default');
    expect(wait('Ja', yesNo, policy, 'de').reason).toBe('short_answer');
  });

  it('waits longest after any digit while the state collects digits', () => {
    expect(wait('four', { ...NO_HINTS, collectingDigits: true, number: true }).reason).toBe('unfinished');
  });

  it('keeps a fixed wait when max_endpointing_ms is the base', () => {
    expect(wait("I'd like to book a table on", yesNo, baseline)).toEqual({ waitMs: 500, reason: 'fixed' });
    expect(wait('yes', yesNo, baseline)).toEqual({ waitMs: 500, reason: 'fixed' });
    expect(shortestWaitMs(baseline)).toBe(500);
  });

  it('never waits less than the floor for a short answer', () => {
    expect(shortestWaitMs({ ...policy, endpointingMs: 250, maxEndpointingMs: 1000 })).toBe(200);
    expect(shortestWaitMs({ ...policy, endpointingMs: 150, maxEndpointingMs: 1000 })).toBe(150);
  });
});
