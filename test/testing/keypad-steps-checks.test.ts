// What a dtmf step's run shows a designer: the action named, where the caller's keys led counted
// in coverage, and whether the call went to the person the test expects.
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { checkStep, describeAction, exercisedBy } from '../../server/testing/checks.ts';

const END = { prompt: '', unfinished: null };

const flowState = (state: string): ServerEvent => ({ type: 'flow_state', state, prompt: '', artifact_type: 'card', variables: {}, tools: [] });

describe('a step that presses keys', () => {
  it('is named by its keys', () => {
    expect(describeAction({ dtmf: '12#' })).toBe('dtmf: 12#');
  });

  it('counts the moves the caller’s keys made as transitions, and the agent’s keys as none', () => {
    const events: ServerEvent[] = [
      flowState('menu'),
      { type: 'dtmf', digits: '0', source: 'caller', moves: [{ from_state: 'menu', to_state: 'human', via: 'key 0' }] },
      flowState('human'),
      { type: 'dtmf', digits: '0w1', source: 'agent', moves: [] },
    ];
    expect(exercisedBy(events)).toEqual({ states: ['menu', 'human'], transitions: [{ from: 'menu', tool: 'key 0', to: 'human' }] });
  });

  it('passes transferred_to when a transfer to the number started and did not fail', () => {
    const started: ServerEvent = { type: 'transfer', to: '+15551234567', mode: 'warm', status: 'started' };
    const step = { dtmf: '0', expect: { transferred_to: '+15551234567' } };
    const passed = checkStep(0, step, [started], [started], END);
    expect(passed.checks).toEqual([{ check: 'transferred_to', passed: true, expected: '+15551234567', actual: [{ to: '+15551234567', mode: 'warm', status: 'started' }], message: 'transferred to +15551234567' }]);
    expect(passed.action).toBe('dtmf: 0');
  });

  it('fails transferred_to when the transfer failed, went elsewhere, or never happened, saying which', () => {
    const step = { dtmf: '0', expect: { transferred_to: '+15551234567' } };
    const failed: ServerEvent[] = [
      { type: 'transfer', to: '+15551234567', mode: 'warm', status: 'started' },
      { type: 'transfer', to: '+15551234567', mode: 'warm', status: 'failed', reason: 'no answer' },
    ];
    expect(checkStep(0, step, failed, failed, END).checks[0]).toMatchObject({ passed: false, message: 'the transfer to +15551234567 failed: no answer' });
    const elsewhere: ServerEvent[] = [{ type: 'transfer', to: 'sip:desk@pbx.example.com', mode: 'cold', status: 'completed' }];
    expect(checkStep(0, step, elsewhere, elsewhere, END).checks[0]).toMatchObject({ passed: false, message: 'expected a transfer to +15551234567; saw sip:desk@pbx.example.com (completed)' });
    expect(checkStep(0, step, [], [], END)).toMatchObject({ passed: false, checks: [{ message: 'expected a transfer to +15551234567; saw no transfer' }] });
  });
});
