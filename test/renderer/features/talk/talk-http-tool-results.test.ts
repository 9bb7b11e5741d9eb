// Test-talk's tool-call log with an http tool (docs/flows.md#extended-flow-keys): the engine sends
// the call's `tool_call` (accepted, no move yet), then its `tool_result` with the request, the
// answer and the time, then the `flow_state` of the state the answer chose.
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../../../server/protocol/events.ts';
import { describeEndReason } from '../../../../renderer/src/features/talk/session-messages.ts';
import { talkReducer } from '../../../../renderer/src/features/talk/talk-reducer.ts';
import { initialTalkView, type TalkView } from '../../../../renderer/src/features/talk/talk-view.ts';

function fold(events: ServerEvent[]): TalkView {
  let view = talkReducer(initialTalkView(), { type: 'connect', textOnly: true });
  let at = 1_000;
  for (const event of events) view = talkReducer(view, { type: 'server', event, at: (at += 1_000) });
  return view;
}

const started: ServerEvent = { type: 'session_started', session_id: 'ses_1', mode: 'flow', flow_id: 'flow_1', sample_rate: 16000 };
const call = (day: string): ServerEvent => ({ type: 'tool_call', name: 'check_availability', arguments: { day }, status: 'accepted', reason: null, from_state: 'welcome', to_state: 'welcome', source: 'model' });
const result = (day: string, ok: boolean, to: string): ServerEvent => ({
  type: 'tool_result',
  name: 'check_availability',
  url: 'https://clinic.example.com/availability',
  method: 'POST',
  arguments: { day },
  ok,
  http_status: ok ? 200 : null,
  duration_ms: ok ? 84 : 3000,
  result: ok ? { slot: '10:30', next_state: to } : null,
  error: ok ? null : 'the check_availability service failed: no answer within 3000 ms',
  from_state: 'welcome',
  to_state: to,
  source: 'model',
});

describe('an http tool call in the test-talk log', () => {
  it('shows the request, what came back and how long it took, on the call it answers', () => {
    const view = fold([started, call('friday'), result('friday', false, 'welcome'), call('tuesday'), result('tuesday', true, 'offer_slot')]);
    expect(view.toolCalls).toHaveLength(2);
    expect(view.toolCalls[0]).toMatchObject({
      name: 'check_availability',
      from: 'welcome',
      to: 'welcome',
      http: { method: 'POST', url: 'https://clinic.example.com/availability', ok: false, status: null, durationMs: 3000, result: null, error: expect.stringContaining('3000 ms') },
    });
    expect(view.toolCalls[1]).toMatchObject({ from: 'welcome', to: 'offer_slot', http: { ok: true, status: 200, durationMs: 84, result: { slot: '10:30' } } });
  });

  it('leaves the log as it was for an answer no call is waiting for', () => {
    const before = fold([started, call('tuesday'), result('tuesday', true, 'offer_slot')]);
    const after = talkReducer(before, { type: 'server', event: result('monday', true, 'offer_slot'), at: 99_000 });
    expect(after.toolCalls).toEqual(before.toolCalls);
  });

  it('says in words that the flow ended the call', () => {
    expect(describeEndReason('flow_ended')).toBe('the flow ended the call');
  });
});
