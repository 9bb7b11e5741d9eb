import { describe, expect, it } from 'vitest';
import { endReasonLabel, flowLabel, sessionSeconds, sessionStatus, sessionTotals } from '../../../../renderer/src/features/sessions/session-rows.ts';
import type { SessionView } from '../../../../renderer/src/lib/api-types.ts';
import { formatAgo, formatDuration } from '../../../../renderer/src/lib/format.ts';

const NOW = 1_700_000_000_000;
const session = (changes: Partial<SessionView>): SessionView => ({
  id: 's1',
  token_prefix: 'abcdefghijkl',
  flow_id: 'f1',
  mode: 'flow',
  transport: 'websocket',
  status: 'ended',
  created_at: NOW / 1000 - 120,
  expires_at: null,
  started_at: NOW / 1000 - 110,
  ended_at: NOW / 1000 - 20,
  duration_secs: 90,
  end_reason: 'client_ended',
  credits_charged_usd_cents: 6,
  ...changes,
});

describe('how the sessions screen words a session', () => {
  it('tells a token never used from one still waiting, and a live call from an ended one', () => {
    expect(sessionStatus(session({ status: 'created', created_at: NOW / 1000 - 60, expires_at: NOW / 1000 + 540 }), NOW).label).toBe('Waiting to connect');
    expect(sessionStatus(session({ status: 'created', created_at: NOW / 1000 - 60, expires_at: NOW / 1000 - 1 }), NOW).label).toBe('Never connected');
    expect(sessionStatus(session({ status: 'expired', created_at: NOW / 1000 - 3600 }), NOW).label).toBe('Never connected');
    expect(sessionStatus(session({ status: 'connected' }), NOW)).toEqual({ label: 'Live', tone: 'live' });
    expect(sessionStatus(session({ end_reason: 'credits_exhausted' }), NOW).tone).toBe('warn');
  });

  it('names the flow, an assistant session, or a deleted flow', () => {
    const names = new Map([['f1', 'Guessing game']]);
    expect(flowLabel(session({}), names)).toBe('Guessing game');
    expect(flowLabel(session({ flow_id: null }), names)).toMatch(/assistant/i);
    expect(flowLabel(session({ flow_id: 'gone' }), names)).toBe('Deleted flow');
  });

  it('counts a live session up to now and adds durations and costs', () => {
    const live = session({ status: 'connected', duration_secs: null, ended_at: null, started_at: NOW / 1000 - 30, credits_charged_usd_cents: 3 });
    expect(sessionSeconds(live, NOW)).toBe(30);
    expect(sessionTotals([session({}), live], NOW)).toEqual({ count: 2, seconds: 120, cents: 9 });
    expect(formatDuration(120)).toBe('2m 00s');
  });

  it('explains end reasons in words, and unknown ones readably', () => {
    expect(endReasonLabel('client_disconnected')).toBe('Caller disconnected');
    expect(endReasonLabel('some_new_reason')).toBe('some new reason');
    expect(endReasonLabel(null)).toBe('—');
  });

  it('says how long ago in words, then the date past a week', () => {
    expect(formatAgo(NOW / 1000 - 10, NOW)).toBe('just now');
    expect(formatAgo(NOW / 1000 - 300, NOW)).toBe('5 min ago');
    expect(formatAgo(NOW / 1000 - 3 * 3600, NOW)).toBe('3 h ago');
    expect(formatAgo(NOW / 1000 - 86_400, NOW)).toBe('yesterday');
    expect(formatAgo(NOW / 1000 - 30 * 86_400, NOW)).not.toMatch(/ago/);
  });
});
