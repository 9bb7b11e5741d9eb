import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DIAGNOSTIC_CODES } from '../../server/flow/diagnostic-codes.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import { exportPipecatFlow, exportPipecatFlowText, importPipecatFlow, looksLikePipecatFlow } from '../../server/flow/pipecat/index.ts';
import { findPlaceholders, renderTemplate } from '../../server/flow/template.ts';
import type { Diagnostic, FlowDocument } from '../../server/flow/types.ts';

// The fixtures are ours, in the shapes of the Pipecat Flows examples (test/flow/pipecat/README.md).
const fixture = (name: string) => readFileSync(new URL(`./pipecat/${name}`, import.meta.url), 'utf8');
const resource = (name: string) => readFileSync(new URL(`../../resources/flows/${name}`, import.meta.url), 'utf8');

function imported(text: string): { document: FlowDocument; diagnostics: Diagnostic[]; yaml: string } {
  const result = importPipecatFlow(text);
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const parsed = parseFlow(result.yaml!);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return { document: parsed.document!, diagnostics: result.diagnostics, yaml: result.yaml! };
}

const codes = (diagnostics: Diagnostic[]) => diagnostics.map((d) => d.code);
/** Every code a conversion reported in these tests, for the coverage check at the end. */
const seen = new Set<string>();
const note = (diagnostics: Array<{ code: string }>) => diagnostics.forEach((d) => seen.add(d.code));

describe('importing a Pipecat FlowConfig', () => {
  it('turns the food-ordering FlowConfig (JSON, OpenAI functions) into a flow with the same nodes, tools and moves', () => {
    const { document, diagnostics } = imported(fixture('food-ordering.flowconfig.json'));
    note(diagnostics);
    expect(document.initial_state).toBe('start');
    expect(Object.keys(document.states)).toEqual(['start', 'choose_pizza', 'choose_sushi', 'confirm', 'end']);
    expect(document.settings?.base_system_prompt).toMatch(/^You take food orders by phone/);
    expect(document.states.start!.agent.tools).toEqual(['choose_pizza', 'choose_sushi']);
    expect(document.states.confirm!.transitions?.on_tool_call).toEqual({ complete_order: 'end', revise_order: 'start' });
    expect(document.states.choose_sushi!.tools!.select_sushi_order!.parameters).toEqual({
      count: { type: 'integer', required: true, description: 'How many rolls' },
      type: { type: 'string', required: true, description: 'Kind of roll', enum: ['california', 'spicy tuna', 'rainbow', 'dragon'] },
    });
    expect(document.states.end!.on_enter).toEqual({ end_session: true });
  });

  it('says, at its line and column in the Pipecat file, each part that does not map', () => {
    const text = fixture('food-ordering.flowconfig.json');
    const { diagnostics } = imported(text);
    const lineOf = (needle: string) => text.split('\n').findIndex((line) => line.includes(needle)) + 1;
    expect(diagnostics.find((d) => d.code === 'pipecat_handler_not_run' && d.path.includes('pre_actions'))).toMatchObject({ line: lineOf('"check_kitchen"') });
    expect(diagnostics.find((d) => d.message.startsWith('`minimum`'))).toMatchObject({ code: 'pipecat_unmapped_key', line: lineOf('"minimum"') });
    expect(diagnostics.find((d) => d.code === 'pipecat_action_moved')).toMatchObject({ line: lineOf('"end_conversation"'), path: ['nodes', 'end', 'post_actions', 0] });
    expect(diagnostics.filter((d) => d.code === 'pipecat_handler_not_run').map((d) => d.message).join('\n')).toContain('select_pizza_order');
    expect(diagnostics.every((d) => d.severity === DIAGNOSTIC_CODES[d.code])).toBe(true);
  });

  it('reads the YAML form, and keeps arrays as text, RESET as context: reset, tts_say and respond_immediately', () => {
    const { document, diagnostics } = imported(fixture('patient-intake.flowconfig.yaml'));
    note(diagnostics);
    expect(document.states.get_prescriptions!.context).toBe('reset');
    expect(document.states.get_prescriptions!.tools!.record_prescriptions!.parameters!.prescriptions).toEqual({ type: 'string', required: true });
    expect(codes(diagnostics)).toContain('pipecat_parameter_adapted');
    expect(document.states.done).toMatchObject({ respond: false, on_enter: { say: 'Thank you, that is everything we need.', end_session: true } });
  });

  it('keeps braces in Pipecat texts as text, never as placeholders', () => {
    const { document } = imported(fixture('patient-intake.flowconfig.yaml'));
    const base = document.settings!.base_system_prompt!;
    expect(findPlaceholders(base)).toEqual([]);
    expect(renderTemplate(base, { lists: 'X' })).toContain('so no {lists} or symbols');
  });

  it('reads Anthropic input_schema functions, user task messages and text-part contents', () => {
    const { document, diagnostics } = imported(fixture('movie-explorer-anthropic.flowconfig.json'));
    note(diagnostics);
    expect(document.states.greeting!.transitions?.on_tool_call).toEqual({ get_current_movies: 'explore_movie', get_upcoming_movies: 'explore_movie' });
    expect(document.states.explore_movie!.agent.prompt).toMatch(/^Help the caller explore films/);
    expect(document.states.explore_movie!.tools!.get_movie_details!.parameters).toEqual({ movie_id: { type: 'integer', required: true, description: "The film's id" } });
    // A handler with no transition_to: the tool keeps the state, and the designer is told.
    expect(diagnostics.find((d) => d.code === 'pipecat_handler_not_run' && d.message.includes('get_movie_details'))?.message).toContain('keeps the state');
  });

  it('reads Gemini function_declarations with parameters: null', () => {
    const { document } = imported(fixture('gemini-declarations.flowconfig.json'));
    expect(document.states.greeting!.agent.tools).toEqual(['get_current_movies', 'get_upcoming_movies']);
    expect(document.states.greeting!.tools!.get_current_movies).toEqual({ description: 'Films in cinemas now' });
  });

  it("reads the Pipecat Flows editor's JSON: next_node_id, global functions, and a decision it cannot route", () => {
    const { document, diagnostics } = imported(fixture('editor-food-ordering.flow.json'));
    note(diagnostics);
    expect(document.id).toBe('food-ordering');
    expect(document.initial_state).toBe('initial');
    expect(document.settings?.global_tools).toEqual({ talk_to_staff: {} });
    expect(document.states.initial!.transitions?.on_tool_call).toEqual({ choose_pizza: 'pizza_task', choose_sushi: 'sushi_task' });
    expect(document.states.sushi_task!.transitions).toBeUndefined();
    const decision = diagnostics.find((d) => d.code === 'pipecat_runtime_transition');
    expect(decision?.message).toContain('"big_order", "confirm"');
    expect(document.states.end!.on_enter).toEqual({ say: 'Thanks for your order!', end_session: true });
  });

  it('adapts what Voxflow names or routes differently, and says so', () => {
    const text = JSON.stringify({
      initial_node: 'nowhere',
      extra: true,
      nodes: {
        a: {
          role_message: 'Be brief.',
          task_messages: [{ role: 'assistant', content: 'Hello {caller}!' }],
          functions: [
            { name: 'look up', description: 'x', properties: { 'first-name': { type: 'string' } }, required: ['first-name', 'missing'], transition_to: 'ghost' },
            { name: 'go', description: 'y', properties: { n: { type: 'integer', enum: [1, 'two'] } }, next_node: 'b', transition_callback: 'cb' },
          ],
          pre_actions: [{ type: 'notify_slack', channel: '#x' }],
          context_strategy: { strategy: 'RESET_WITH_SUMMARY', summary_prompt: 'Sum up.' },
        },
        b: { role_messages: [{ role: 'system', content: 'Be formal.' }], task_messages: [{ role: 'system', content: 'Bye.' }] },
      },
    });
    const { document, diagnostics } = imported(text);
    note(diagnostics);
    expect(document.initial_state).toBe('a');
    expect(document.states.a!.agent.tools).toEqual(['look_up', 'go']);
    expect(document.states.a!.tools!.look_up!.parameters).toEqual({ first_name: { type: 'string', required: true } });
    expect(document.states.a!.tools!.go!.parameters).toEqual({ n: { type: 'integer', enum: [1] } });
    expect(document.states.a!.transitions?.on_tool_call).toEqual({ go: 'b' });
    expect(document.states.a!.context).toBe('reset');
    expect(document.settings?.base_system_prompt).toBe('Be brief.');
    expect(document.states.b!.agent.prompt).toBe('Be formal.\n\nBye.');
    expect(renderTemplate(document.states.a!.agent.prompt, {})).toBe('Hello {caller}!');
    expect(new Set(codes(diagnostics))).toEqual(
      new Set([
        'pipecat_unknown_initial_node',
        'pipecat_unmapped_key',
        'pipecat_message_adapted',
        'pipecat_renamed',
        'pipecat_parameter_adapted',
        'pipecat_unknown_target',
        'pipecat_runtime_transition',
        'pipecat_unsupported_action',
        'pipecat_context_summary',
      ]),
    );
  });

  it('refuses, with a coded error, what is not a FlowConfig', () => {
    for (const text of ['{ not json', 'just: text', resource('guessing-game.yaml'), '{"initial_node": "a", "nodes": {}}']) {
      const result = importPipecatFlow(text);
      note(result.diagnostics);
      expect(result.yaml).toBeNull();
      expect(result.diagnostics).toHaveLength(1);
      expect(result.diagnostics[0]).toMatchObject({ severity: 'error', code: 'pipecat_not_a_flow_config' });
    }
    expect(importPipecatFlow(resource('guessing-game.yaml')).diagnostics[0]!.message).toContain('Voxflow flow');
  });

  it('tells a FlowConfig from a Voxflow flow by its shape', () => {
    expect(looksLikePipecatFlow(fixture('food-ordering.flowconfig.json'))).toBe(true);
    expect(looksLikePipecatFlow(fixture('patient-intake.flowconfig.yaml'))).toBe(true);
    expect(looksLikePipecatFlow(fixture('editor-food-ordering.flow.json'))).toBe(true);
    expect(looksLikePipecatFlow(resource('guessing-game.yaml'))).toBe(false);
    expect(looksLikePipecatFlow('{ broken')).toBe(false);
  });
});

describe('exporting a Voxflow flow as a FlowConfig', () => {
  it('says what the appointment-booking flow has that a FlowConfig cannot hold', () => {
    const document = parseFlow(resource('appointment-booking.yaml')).document!;
    const { flowConfig, diagnostics } = exportPipecatFlow(document);
    note(diagnostics);
    const at = (code: string) => diagnostics.filter((d) => d.code === code).map((d) => d.path.join('.'));
    expect(at('pipecat_no_equivalent')).toEqual(
      expect.arrayContaining(['settings.llm', 'settings.idle', 'tools.check_availability.http', 'states.welcome.transitions.on_tool_result.check_availability', 'states.welcome.interruptible', 'states.welcome.ui']),
    );
    expect(at('pipecat_global_tool_copied')).toEqual(['settings.global_tools.talk_to_human']);
    expect(at('pipecat_placeholder_kept')).toContain('states.ask_day.agent.prompt');
    // The global tool is in every node, with its fixed target.
    for (const node of Object.values(flowConfig.nodes)) {
      expect(node.functions?.find((f) => f.function.name === 'talk_to_human')?.function.transition_to).toBe('human_handoff');
    }
    expect(flowConfig.nodes.booked!.pre_actions).toEqual([
      { type: 'tts_say', text: 'You are booked for {day} at {slot}. We look forward to seeing you. Goodbye!' },
      { type: 'end_conversation' },
    ]);
  });

  it('writes YAML a person reads: no anchors for a tool two states share, lists of values on one line', () => {
    const exported = exportPipecatFlowText(resource('appointment-booking.yaml'));
    if (!exported.ok) throw new Error('the appointment booking has errors');
    expect(exported.yaml).not.toMatch(/[&*]a\d/);
    expect(exported.yaml).toContain('enum: [monday, tuesday, wednesday, thursday, friday]');
    expect(parseYaml(exported.yaml)).toEqual(exported.flowConfig);
  });

  it('writes doubled braces as the single braces they stand for', () => {
    const document = parseFlow('id: x\nversion: "1.0.0"\ninitial_state: a\nstates:\n  a:\n    agent:\n      prompt: "Answer as {{\\"ok\\": true}}"\n').document!;
    const { flowConfig, diagnostics } = exportPipecatFlow(document);
    expect(flowConfig.nodes.a!.task_messages[0]!.content).toBe('Answer as {"ok": true}');
    expect(diagnostics).toEqual([]);
  });
});

describe('the Pipecat diagnostic codes', () => {
  it('are each reported by some conversion above', () => {
    // The declarative FlowConfig's own codes are covered by pipecat-declarative.test.ts.
    const declarative = new Set(['pipecat_format_guessed', 'pipecat_invalid_value', 'pipecat_function_without_schema', 'pipecat_companion_invalid', 'pipecat_branch_adapted', 'pipecat_global_function_copied']);
    const pipecatCodes = Object.keys(DIAGNOSTIC_CODES).filter((code) => code.startsWith('pipecat_') && !declarative.has(code));
    expect([...seen].filter((code) => code.startsWith('pipecat_')).sort()).toEqual(pipecatCodes.sort());
  });
});
