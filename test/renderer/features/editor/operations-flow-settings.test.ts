// The inspector's remaining edits of DESIGN §12's keys: renaming a tool that only the flow's
// top-level `tools` defines, the flow's own settings and its global tools, and an http tool's
// action. Each is checked on the appointment-booking example and through the YAML text, which
// must keep its comments and stay valid.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import * as ops from '../../../../renderer/src/features/editor/operations.ts';
import { parseFlow } from '../../../../server/flow/parse.ts';

const TEXT = readFileSync(new URL('../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
const BOOKING = parse(TEXT);
const errorsOf = (data: unknown) => parseFlow(stringify(data)).diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);

describe('renaming a tool defined only in the top-level tools', () => {
  it('renames the shared definition, every state that lists it, their result branches and the global entry', () => {
    const renamed: any = ops.renameTool(BOOKING, 'welcome', 'check_availability', 'find_slot');
    expect(Object.keys(renamed.tools)).toEqual(['talk_to_human', 'find_slot']);
    expect(renamed.tools.find_slot.http.url).toBe('https://clinic.example.com/voxflow/availability');
    expect(renamed.states.welcome.agent.tools).toEqual(['find_slot']);
    expect(renamed.states.ask_day.agent.tools).toEqual(['find_slot']);
    expect(renamed.states.ask_day.transitions.on_tool_result).toEqual({ find_slot: ['offer_slot', 'ask_day'] });
    expect(errorsOf(renamed)).toEqual([]);

    const human: any = ops.renameTool(BOOKING, 'welcome', 'talk_to_human', 'ask_for_person');
    expect(human.settings.global_tools).toEqual({ ask_for_person: { target: 'human_handoff' } });
    expect(Object.keys(human.tools)).toEqual(['ask_for_person', 'check_availability']);
    expect(errorsOf(human)).toEqual([]);
  });

  it('leaves a state that defines a tool of that name itself alone, and refuses a name the flow already defines', () => {
    const own: any = structuredClone(BOOKING);
    own.states.ask_day.tools = { check_availability: { description: 'its own' } };
    const renamed: any = ops.renameTool(own, 'welcome', 'check_availability', 'find_slot');
    expect(renamed.states.ask_day.agent.tools).toEqual(['check_availability']);
    expect(renamed.states.ask_day.tools).toEqual({ check_availability: { description: 'its own' } });
    expect(ops.renameTool(BOOKING, 'welcome', 'check_availability', 'talk_to_human')).toBe(BOOKING);
  });

  it('keeps the text\'s comments when applied onto the YAML', () => {
    const written = ops.applyEditToText(TEXT, BOOKING, (d) => ops.renameTool(d, 'welcome', 'check_availability', 'find_slot'))!;
    expect(written.text).toContain('# Appointment booking for a dental practice');
    expect(written.text).toContain('  find_slot:\n    description: Check which appointment slot is free on a weekday.');
    // Prompts still say the old name in words (the designer's to change); no key or list does.
    expect(written.text).not.toMatch(/check_availability:|\[check_availability\]/);
    expect(written.text.match(/tools: \[find_slot\]/g)).toHaveLength(2);
  });
});
