// Coverage of an http tool whose answer chooses the next state (`on_tool_result`, see
// docs/flows.md and docs/testing.md#flow-tests): each state the answer may lead to is a transition
// of its own, and so is the way the call goes when the answer chooses nothing (a failure stays), so
// tests that only ever get one answer show the other branch untested.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { describeCoverage, flowCoverage, flowTransitions, mergeExercised } from '../../server/flow/tests-coverage.ts';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { exercisedBy } from '../../server/testing/checks.ts';

const BOOKING = parseFlow(readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8')).document!;
const show = (t: { from: string; tool: string; to: string }) => `${t.from}.${t.tool}→${t.to}`;

function call(name: string, from: string, to: string): ServerEvent {
  return { type: 'tool_call', name, arguments: {}, status: 'accepted', reason: null, from_state: from, to_state: to, source: 'model' };
}
function result(name: string, from: string, to: string, ok = true): ServerEvent {
  return {
    type: 'tool_result', name, url: 'http://127.0.0.1/x', method: 'POST', arguments: {}, ok, http_status: ok ? 200 : 500, duration_ms: 3,
    result: ok ? { next_state: to } : null, error: ok ? null : 'HTTP 500', from_state: from, to_state: to, source: 'model',
  };
}
function entered(state: string): ServerEvent {
  return { type: 'flow_state', state, prompt: '', artifact_type: 'card', variables: {}, tools: [] };
}

describe('coverage of on_tool_result transitions', () => {
  it('counts each state an answer may choose, and the stay of a failed call, as transitions of their own', () => {
    expect(flowTransitions(BOOKING).map(show)).toEqual([
      'welcome.check_availability→welcome',
      'welcome.check_availability→offer_slot',
      'welcome.check_availability→ask_day',
      // ask_day lists itself among the answers: that is its stay, counted once.
      'ask_day.check_availability→ask_day',
      'ask_day.check_availability→offer_slot',
      'offer_slot.confirm_booking→booked',
      'offer_slot.another_day→ask_day',
    ]);
  });

  it('shows the other result target uncovered when the tests only reach one', () => {
    // The service answered next_state: offer_slot; the call itself stayed until the answer came.
    const exercised = exercisedBy([
      entered('welcome'),
      call('check_availability', 'welcome', 'welcome'),
      result('check_availability', 'welcome', 'offer_slot'),
      entered('offer_slot'),
      call('confirm_booking', 'offer_slot', 'booked'),
      entered('booked'),
    ]);
    expect(exercised.transitions.map(show)).toEqual(['welcome.check_availability→offer_slot', 'offer_slot.confirm_booking→booked']);

    const coverage = flowCoverage(BOOKING, exercised);
    expect(coverage.transitions.covered.map(show)).toEqual(['welcome.check_availability→offer_slot', 'offer_slot.confirm_booking→booked']);
    expect(coverage.transitions.uncovered.map(show)).toContain('welcome.check_availability→ask_day');
    // The call being made from welcome is not the stay: no answer kept the session there.
    expect(coverage.transitions.uncovered.map(show)).toContain('welcome.check_availability→welcome');
    expect(coverage.tools.covered).toEqual(['check_availability', 'confirm_booking']);
    expect(describeCoverage(coverage)).toBe('3/5 states, 2/7 transitions, 2/4 tools');
  });

  it('covers both branches once another test gets the other answer, and a failed answer covers the stay', () => {
    const first = exercisedBy([entered('welcome'), call('check_availability', 'welcome', 'welcome'), result('check_availability', 'welcome', 'offer_slot'), entered('offer_slot')]);
    const second = exercisedBy([
      entered('welcome'),
      call('check_availability', 'welcome', 'welcome'),
      result('check_availability', 'welcome', 'welcome', false),
      call('check_availability', 'welcome', 'welcome'),
      result('check_availability', 'welcome', 'ask_day'),
      entered('ask_day'),
    ]);
    expect(second.transitions.map(show)).toEqual(['welcome.check_availability→welcome', 'welcome.check_availability→ask_day']);
    const coverage = flowCoverage(BOOKING, mergeExercised([first, second]));
    expect(coverage.transitions.uncovered.filter((t) => t.from === 'welcome')).toEqual([]);
  });

  it('keeps a call whose answer came after the session moved on as the stay it was', () => {
    const exercised = exercisedBy([
      entered('welcome'),
      call('check_availability', 'welcome', 'welcome'),
      call('talk_to_human', 'welcome', 'human_handoff'),
      entered('human_handoff'),
      result('check_availability', 'human_handoff', 'human_handoff'),
    ]);
    expect(exercised.transitions.map(show)).toEqual(['welcome.check_availability→welcome', 'welcome.talk_to_human→human_handoff']);
    // talk_to_human is a global tool: a tool reached, no transition of welcome.
    const coverage = flowCoverage(BOOKING, exercised);
    expect(coverage.tools.covered).toContain('talk_to_human');
    expect(coverage.transitions.covered.map(show)).toEqual(['welcome.check_availability→welcome']);
  });
});
