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

describe("a phone call's keys and transfers", () => {
  const menu = {
    started_at: 100,
    created_at: 99,
    duration_secs: 10,
    path: [
      { state: 'menu', at: 100.1 },
      { state: 'hours', at: 102 },
      { state: 'human', at: 104 },
    ],
    transcript: [],
    tool_calls: [],
    errors: [],
  } as unknown as SessionDetail;
  const events = [
    { seq: 1, at: 101, type: 'dtmf', event: { type: 'dtmf', digits: '9', source: 'caller', moves: [] } },
    { seq: 2, at: 102, type: 'dtmf', event: { type: 'dtmf', digits: '1', source: 'caller', moves: [{ from_state: 'menu', to_state: 'hours', via: 'key 1' }] } },
    { seq: 3, at: 104, type: 'dtmf', event: { type: 'dtmf', digits: '0', source: 'caller', moves: [{ from_state: 'hours', to_state: 'human', via: 'key 0' }] } },
    { seq: 4, at: 105, type: 'transfer', event: { type: 'transfer', to: '+15551234567', mode: 'cold', status: 'failed', reason: 'busy' } },
    // What the view does not show, and what it cannot read, is left out.
    { seq: 5, at: 105, type: 'metrics', event: { type: 'metrics' } },
    { seq: 6, at: 105, type: 'transfer', event: { type: 'transfer', status: 'nonsense' } },
  ];
  const all = moments(menu, events);

  it('puts each key before the state it led to, and the transfer with its reason', () => {
    expect(all.map((m) => (m.kind === 'keys' ? `keys ${m.digits}` : m.kind === 'state' ? `state ${m.state}` : m.kind === 'transfer' ? `transfer ${m.status} ${m.reason}` : m.kind))).toEqual([
      'state menu',
      'keys 9',
      'keys 1',
      'state hours',
      'keys 0',
      'state human',
      'transfer failed busy',
    ]);
  });

  it("lights the keys' links on the graph, as test-talk does", () => {
    expect(overlayAt(all, 10).moves).toEqual([
      { from: 'menu', to: 'hours', tool: 'key 1' },
      { from: 'hours', to: 'human', tool: 'key 0' },
    ]);
  });
});
