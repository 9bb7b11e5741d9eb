// The editor's operations keep the extended keys' references whole: renaming or deleting a state
// updates the `on_tool_result` lists and the global tools' targets that name it, and renaming or
// removing a tool takes its result transitions along.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import * as ops from '../../../../../renderer/src/features/editor/document/operations.ts';
import { parseFlow } from '../../../../../server/flow/parse.ts';

const BOOKING = parse(readFileSync(new URL('../../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8'));
const results = (data: any, state: string) => data.states[state].transitions?.on_tool_result;
const errorsOf = (data: unknown) => parseFlow(stringify(data)).diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);

describe('editing a flow with result transitions and global tools', () => {
  it('renames a state everywhere it is named, and the flow stays valid', () => {
    const renamed: any = ops.renameState(BOOKING, 'offer_slot', 'propose_slot');
    expect(results(renamed, 'welcome')).toEqual({ check_availability: ['propose_slot', 'ask_day'] });
    expect(results(renamed, 'ask_day')).toEqual({ check_availability: ['propose_slot', 'ask_day'] });
    const handoff: any = ops.renameState(BOOKING, 'human_handoff', 'person');
    expect(handoff.settings.global_tools.talk_to_human).toEqual({ target: 'person' });
    expect(errorsOf(renamed)).toEqual([]);
    expect(errorsOf(handoff)).toEqual([]);
  });

  it('deletes a state from the result lists and the global targets that named it', () => {
    const deleted: any = ops.deleteState(BOOKING, 'ask_day');
    expect(results(deleted, 'welcome')).toEqual({ check_availability: ['offer_slot'] });
    const noHandoff: any = ops.deleteState(BOOKING, 'human_handoff');
    expect(noHandoff.settings.global_tools.talk_to_human).toEqual({});
    expect(errorsOf(deleted)).toEqual([]);
    expect(errorsOf(noHandoff)).toEqual([]);
  });

  it('takes a tool\'s result transitions along when it is renamed or removed', () => {
    const withOwn: any = structuredClone(BOOKING);
    withOwn.states.offer_slot.transitions.on_tool_result = { confirm_booking: ['booked'] };
    const renamed: any = ops.renameTool(withOwn, 'offer_slot', 'confirm_booking', 'accept');
    expect(results(renamed, 'offer_slot')).toEqual({ accept: ['booked'] });
    const removed: any = ops.removeTool(withOwn, 'offer_slot', 'confirm_booking');
    expect(results(removed, 'offer_slot')).toBeUndefined();
    expect(removed.states.offer_slot.transitions).toEqual({ on_tool_call: { another_day: 'ask_day' } });
  });

  it('leaves the input as it was', () => {
    const before = structuredClone(BOOKING);
    ops.renameState(BOOKING, 'offer_slot', 'x');
    ops.deleteState(BOOKING, 'ask_day');
    expect(BOOKING).toEqual(before);
  });
});
