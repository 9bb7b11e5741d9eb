// The turn-taking decisions (docs/flows.md#turn-taking) as the studio shows them: in the
// test-talk log as they come, and in the session view's conversation from the stored timeline.
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../../../server/protocol/events.ts';
import { moments } from '../../../../renderer/src/features/sessions/session-timeline.ts';
import { talkReducer } from '../../../../renderer/src/features/talk/talk-reducer.ts';
import { initialTalkView, type TalkView } from '../../../../renderer/src/features/talk/talk-view.ts';
import type { SessionDetail, SessionEventsPage } from '../../../../renderer/src/lib/api-types.ts';

const EVENTS: ServerEvent[] = [
  { type: 'session_started', session_id: 'ses_1', mode: 'flow', flow_id: 'flow_1', sample_rate: 16000 },
  { type: 'agent_started_speaking' },
  { type: 'user_started_speaking' },
  { type: 'barge_in', decision: 'ignored_backchannel', reason: 'backchannel', transcript: 'uh-huh', duration_ms: 420 },
  { type: 'user_started_speaking' },
  { type: 'barge_in', decision: 'resumed', reason: 'no_words', transcript: null, duration_ms: 300 },
  { type: 'user_started_speaking' },
  { type: 'interrupted' },
  { type: 'barge_in', decision: 'interrupted', reason: 'words', transcript: 'wait, no, Tuesday', duration_ms: 250 },
  { type: 'turn_end', wait_ms: 1500, reason: 'unfinished', transcript: "I'd like to book a table on" },
];

function fold(events: readonly ServerEvent[]): TalkView[] {
  const views = [talkReducer(initialTalkView(), { type: 'connect', textOnly: false })];
  events.forEach((event, i) => views.push(talkReducer(views.at(-1)!, { type: 'server', event, at: 1_000 + i })));
  return views;
}

describe('turn-taking decisions', () => {
  it('are listed in the test-talk log in words, and the agent is speaking again after one it went on over', () => {
    const views = fold(EVENTS);
    expect(views.at(-1)!.turnDecisions.map((d) => [d.kind, d.summary, d.detail])).toEqual([
      ['ignored_backchannel', 'Agent went on', '“uh-huh” is a backchannel'],
      ['resumed', 'Agent resumed', 'no words in 0.3 s of sound'],
      ['interrupted', 'Agent cut', 'by “wait, no, Tuesday”'],
      ['turn_end', 'Turn ended', "1500 ms of silence after “I'd like to book a table on”: the words stopped mid-sentence"],
    ]);
    // Listening while the caller spoke over it, speaking again once it went on.
    expect(views[4]!.activity).toBe('speaking');
    expect(views[3]!.activity).toBe('listening');
    expect(views[9]!.activity).toBe('interrupted');
  });

  it('are moments of the session view\'s conversation, read from the timeline', () => {
    const detail = { started_at: 100, created_at: 100, duration_secs: 5, path: [], transcript: [], tool_calls: [], errors: [] } as unknown as SessionDetail;
    const events = EVENTS.map((event, i) => ({ seq: i + 1, at: 100 + i / 10, type: event.type, event })) as unknown as SessionEventsPage['events'];
    const turns = moments(detail, events).filter((m) => m.kind === 'turn');
    expect(turns.map((m) => m.kind === 'turn' && [m.decision, m.summary])).toEqual([
      ['ignored_backchannel', 'Agent went on'],
      ['resumed', 'Agent resumed'],
      ['interrupted', 'Agent cut'],
      ['turn_end', 'Turn ended'],
    ]);
    expect(turns[0]!.offset).toBeCloseTo(0.3);
  });

  it('leave out a decision a newer server may send that this studio has no words for', () => {
    const odd = { type: 'barge_in', decision: 'deferred', reason: 'words', transcript: 'x', duration_ms: 1 } as unknown as ServerEvent;
    expect(fold([EVENTS[0]!, odd]).at(-1)!.turnDecisions).toEqual([]);
  });
});
