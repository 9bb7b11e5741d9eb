// The inspector's remaining edits of the extended flow keys: renaming a tool that only the flow's
// top-level `tools` defines, the flow's own settings and its global tools, and an http tool's
// action. Each is checked on the appointment-booking example and through the YAML text, which
// must keep its comments and stay valid.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import * as ext from '../../../../../renderer/src/features/editor/document/operations-extended.ts';
import * as ops from '../../../../../renderer/src/features/editor/document/operations.ts';
import { parseFlow } from '../../../../../server/flow/parse.ts';

const TEXT = readFileSync(new URL('../../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
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

describe('the flow\'s settings and global tools', () => {
  it('writes each setting where the schema has it, drops what is emptied, and stays valid', () => {
    const set: any = ops.applyEditToText(TEXT, BOOKING, (d) =>
      ext.setFlowSettings(d, { llmModel: 'gpt-4o-mini', voiceProvider: 'deepgram', voiceName: 'aura-asteria-en', sttModel: 'nova-2', language: 'de-DE', recording: true, idleMaxReprompts: 2 }),
    )!;
    expect(set.data.settings).toMatchObject({
      llm: { temperature: 0.2, model: 'gpt-4o-mini' },
      voice: { provider: 'deepgram', voice: 'aura-asteria-en' },
      stt: { model: 'nova-2' },
      language: 'de-DE',
      recording: true,
      idle: { after_secs: 12, max_reprompts: 2 },
    });
    expect(set.text).toContain('# Appointment booking for a dental practice');
    expect(errorsOf(set.data)).toEqual([]);

    const cleared: any = ext.setFlowSettings(set.data, { llmModel: '', llmTemperature: null, voiceProvider: '', voiceName: '', sttModel: '', recording: false, idleAfterSecs: null });
    expect(Object.keys(cleared.settings)).toEqual(['base_system_prompt', 'language', 'global_tools']);
    expect(errorsOf(cleared)).toEqual([]);
  });

  it('adds a reprompt only with a wait, and a flow without settings gets none from an empty edit', () => {
    const bare: any = { id: 'x', version: '1', initial_state: 'a', states: { a: { agent: { prompt: 'hi' } } } };
    expect(ext.setFlowSettings(bare, { idleReprompt: 'Still there?' })).toEqual(bare);
    const waits: any = ext.setFlowSettings(bare, { idleAfterSecs: 8, idleReprompt: 'Still there?' });
    expect(waits.settings).toEqual({ idle: { after_secs: 8, reprompt: 'Still there?' } });
    expect(ext.setFlowSettings(waits, { idleAfterSecs: null })).toEqual(bare);
  });

  it('offers a top-level tool in every state with or without a target, and stops offering it', () => {
    const offered: any = ext.setGlobalTool(BOOKING, 'check_availability', { target: 'offer_slot' });
    expect(offered.settings.global_tools).toEqual({ talk_to_human: { target: 'human_handoff' }, check_availability: { target: 'offer_slot' } });
    const stays: any = ext.setGlobalTool(offered, 'talk_to_human', { target: null });
    expect(stays.settings.global_tools.talk_to_human).toEqual({});
    const none: any = ext.setGlobalTool(ext.setGlobalTool(stays, 'talk_to_human', null), 'check_availability', null);
    expect(none.settings.global_tools).toBeUndefined();
    expect(errorsOf(stays)).toEqual([]);
    // A tool only a state defines cannot be global.
    expect(ext.setGlobalTool(BOOKING, 'confirm_booking', { target: null })).toBe(BOOKING);
  });
});

describe('an http tool\'s action and result branches', () => {
  it('edits a shared tool\'s action where it is defined, with a header naming a secret', () => {
    const edited: any = ext.setHttpAction(BOOKING, 'welcome', 'check_availability', {
      method: 'PUT',
      timeoutMs: 8000,
      headers: [
        { name: 'Authorization', value: 'Bearer {secret.clinic_api_token}' },
        { name: 'X-Clinic', value: ext.secretReference('clinic_id') },
      ],
    });
    expect(edited.tools.check_availability.http).toEqual({
      url: 'https://clinic.example.com/voxflow/availability',
      timeout_ms: 8000,
      headers: { Authorization: 'Bearer {secret.clinic_api_token}', 'X-Clinic': '{secret.clinic_id}' },
      store: { slot: 'slot' },
      method: 'PUT',
    });
    expect(edited.states.welcome.tools).toBeUndefined();
    const back: any = ext.setHttpAction(edited, 'welcome', 'check_availability', { method: 'POST', timeoutMs: null, headers: [] });
    expect(back.tools.check_availability.http).toEqual({ url: 'https://clinic.example.com/voxflow/availability', store: { slot: 'slot' } });
  });

  it('edits the variables kept from the answer (store) in order, and takes store away when emptied', () => {
    const kept: any = ext.setHttpAction(BOOKING, 'welcome', 'check_availability', {
      store: [
        { variable: 'slot', field: 'slot.start' },
        { variable: 'dentist', field: ' slot.dentist.name ' },
        { variable: ' ', field: 'ignored' },
      ],
    });
    expect(kept.tools.check_availability.http.store).toEqual({ slot: 'slot.start', dentist: 'slot.dentist.name' });
    expect(Object.keys(kept.tools.check_availability.http)).toEqual(['url', 'timeout_ms', 'headers', 'store']);
    expect(errorsOf(kept)).toEqual([]);
    const none: any = ext.setHttpAction(kept, 'welcome', 'check_availability', { store: [] });
    expect(none.tools.check_availability.http.store).toBeUndefined();
    expect(none.tools.check_availability.http.url).toBe('https://clinic.example.com/voxflow/availability');
  });

  it('makes a state\'s own tool an http tool and back, and sets the states its result may choose', () => {
    const made: any = ext.setHttpAction(BOOKING, 'offer_slot', 'confirm_booking', { url: 'https://clinic.example.com/book' });
    expect(made.states.offer_slot.tools.confirm_booking).toEqual({ description: 'The caller accepts the offered slot.', http: { url: 'https://clinic.example.com/book' } });
    const branched: any = ext.setResultTargets(made, 'offer_slot', 'confirm_booking', ['booked', 'ask_day', 'nowhere']);
    expect(branched.states.offer_slot.transitions.on_tool_result).toEqual({ confirm_booking: ['booked', 'ask_day'] });
    expect(errorsOf(branched)).toEqual([]);
    const plain: any = ext.setResultTargets(ext.setHttpAction(branched, 'offer_slot', 'confirm_booking', null), 'offer_slot', 'confirm_booking', []);
    expect(plain.states.offer_slot).toEqual(BOOKING.states.offer_slot);
  });
});

describe('a state\'s variables set on entering', () => {
  it('writes on_enter.set before say, reads values as YAML would, and takes it away when emptied', () => {
    const set: any = ext.setEntryVariables(BOOKING, 'booked', [
      { name: 'booked', value: 'true' },
      { name: 'attempts', value: '0' },
      { name: 'note', value: 'see {day}' },
    ]);
    expect(Object.keys(set.states.booked.on_enter)).toEqual(['set', 'say', 'end_session']);
    expect(set.states.booked.on_enter.set).toEqual({ booked: true, attempts: 0, note: 'see {day}' });
    expect(errorsOf(set)).toEqual([]);
    expect(ext.setEntryVariables(set, 'booked', [])).toEqual(BOOKING);
    const fresh: any = ext.setEntryVariables(BOOKING, 'offer_slot', [{ name: 'offered', value: 'yes' }]);
    expect(ext.setEntryVariables(fresh, 'offer_slot', []).states).toEqual(BOOKING.states);
  });
});

describe('adding a tool the flow already shares', () => {
  it('lists the shared tool in the state without defining a copy that would hide it', () => {
    const added: any = ops.addTool(BOOKING, 'offer_slot', { name: 'check_availability', description: 'Call when check availability.' });
    expect(added.states.offer_slot.agent.tools).toEqual(['confirm_booking', 'another_day', 'check_availability']);
    expect(Object.keys(added.states.offer_slot.tools)).toEqual(['confirm_booking', 'another_day']);
    expect(errorsOf(added)).toEqual([]);
  });
});
