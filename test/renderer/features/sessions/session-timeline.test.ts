// The session view's replay on the graph: the overlay of any moment is what test-talk would have
// painted at that moment of the session.
import { describe, expect, it } from 'vitest';
import { clock, moments, overlayAt } from '../../../../renderer/src/features/sessions/session-timeline.ts';
import type { SessionDetail } from '../../../../renderer/src/lib/api-types.ts';

const call = (name: string, from: string, to: string, at: number, status: 'accepted' | 'rejected' = 'accepted') => ({
  name,
  arguments: {},
  status,
  reason: status === 'rejected' ? 'not available here' : null,
  from_state: from,
  to_state: to,
  source: 'model' as const,
  at,
});

const detail = {
  started_at: 100,
  created_at: 99,
  duration_secs: 10,
  path: [
    { state: 'setup', at: 100.2 },
    { state: 'playing', at: 102 },
    { state: 'won', at: 106 },
  ],
  transcript: [],
  tool_calls: [call('guess_correct', 'setup', 'setup', 101, 'rejected'), call('begin_game', 'setup', 'playing', 102), call('record_answer', 'playing', 'playing', 104), call('guess_correct', 'playing', 'won', 106)],
  errors: [],
} as unknown as SessionDetail;

describe('the session replayed on the graph', () => {
  const all = moments(detail);

  it('starts in the initial state with nothing taken', () => {
    expect(overlayAt(all, 0)).toEqual({ live: true, activeState: 'setup', trail: ['setup'], moves: [], lastMove: null });
  });

  it('has the states entered and the accepted calls up to the moment, rejected ones left out, the last one animated', () => {
    expect(overlayAt(all, 4.5)).toEqual({
      live: true,
      activeState: 'playing',
      trail: ['setup', 'playing'],
      moves: [
        { from: 'setup', to: 'playing', tool: 'begin_game' },
        { from: 'playing', to: 'playing', tool: 'record_answer' },
      ],
      lastMove: { from: 'playing', to: 'playing', tool: 'record_answer' },
    });
  });

  it('ends where the session ended', () => {
    const end = overlayAt(all, 10);
    expect(end.activeState).toBe('won');
    expect(end.trail).toEqual(['setup', 'playing', 'won']);
    expect(end.moves).toHaveLength(3);
  });
});

describe('the clock of a moment', () => {
  it('says minutes and seconds, and tenths for a short session', () => {
    expect(clock(75.46)).toBe('1:15');
    expect(clock(0.26, true)).toBe('0:00.2');
    expect(clock(59.99, true)).toBe('0:59.9');
  });
});
