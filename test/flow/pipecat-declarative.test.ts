import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { DIAGNOSTIC_CODES } from '../../server/flow/diagnostic-codes.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import { exportDeclarativeFlow, exportDeclarativeFlowText, importPipecatFlow } from '../../server/flow/pipecat/index.ts';
import type { Diagnostic, FlowDocument } from '../../server/flow/types.ts';
import { scaledRuns } from '../support/property-runs.ts';

// Pipecat Flows 1.x's declarative YAML FlowConfig (pipecat.flows): in as a Voxflow flow, out as a
// FlowConfig that Pipecat's own JSON Schema accepts, and back again without losing the flow.
const fixture = (name: string) => readFileSync(new URL(`./pipecat/${name}`, import.meta.url), 'utf8');
const resource = (name: string) => readFileSync(new URL(`../../resources/flows/${name}`, import.meta.url), 'utf8');

const ajv = new Ajv2020({ allErrors: true, strict: true });
const validateFlowConfig = ajv.compile(JSON.parse(fixture('flow_config.schema.json')));
function expectValid(config: unknown) {
  const valid = validateFlowConfig(config);
  expect(validateFlowConfig.errors ?? [], JSON.stringify(validateFlowConfig.errors)).toEqual([]);
  expect(valid).toBe(true);
}

const seen = new Set<string>();
const note = (diagnostics: Array<{ code: string }>) => diagnostics.forEach((d) => seen.add(d.code));

function imported(text: string) {
  const result = importPipecatFlow(text);
  note(result.diagnostics);
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const parsed = parseFlow(result.yaml!);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return { ...result, document: parsed.document! };
}

/** The 1-based line of the first line of `text` that contains `needle` (after line `after`). */
function lineOf(text: string, needle: string, after = 0): number {
  const index = text.split('\n').findIndex((line, i) => i >= after && line.includes(needle));
  if (index < 0) throw new Error(`no line has ${needle}`);
  return index + 1;
}
/** `line:column` of `needle` on the first line (after line `after`) that contains it. */
function place(text: string, needle: string, after = 0): string {
  const line = lineOf(text, needle, after);
  return `${line}:${text.split('\n')[line - 1]!.indexOf(needle) + 1}`;
}
const at = (diagnostics: Diagnostic[], code: string) => diagnostics.filter((d) => d.code === code).map((d) => `${d.line}:${d.column}`);

/** What a Voxflow flow means, as far as a FlowConfig and its voxflow comment can carry it. */
function meaning(document: FlowDocument) {
  const globals = document.settings?.global_tools ?? {};
  return {
    initial: document.initial_state,
    base: document.settings?.base_system_prompt,
    globals: Object.fromEntries(Object.entries(globals).map(([tool, global]) => [tool, { definition: document.tools?.[tool], target: global.target }])),
    states: Object.fromEntries(
      Object.entries(document.states).map(([name, state]) => [
        name,
        {
          prompt: state.agent.prompt,
          tools: Object.fromEntries((state.agent.tools ?? []).map((tool) => [tool, state.tools?.[tool] ?? document.tools?.[tool]])),
          onToolCall: state.transitions?.on_tool_call ?? {},
          onToolResult: state.transitions?.on_tool_result ?? {},
          onEnter: { say: state.on_enter?.say, end: state.on_enter?.end_session },
          respond: state.respond ?? true,
          context: state.context ?? 'keep',
        },
      ]),
    ),
  };
}

describe('importing the declarative YAML FlowConfig', () => {
  const text = fixture('pizza-order.flowconfig.yaml');

  it('maps nodes, roles, messages, functions, transitions, branches, actions and global functions', () => {
    const { document, format } = imported(text);
    expect(format).toBe('declarative');
    expect(document.initial_state).toBe('greet');
    expect(document.settings?.base_system_prompt).toBe("You are the friendly order-taker of Tony's Pizza. Keep answers short.");
    // A variable Pipecat fills when bound is one a session's context fills; other braces are text.
    expect(document.states.greet!.agent.prompt).toBe('Greet {customer_name} and ask whether they want a pizza or a salad. Prices are in {{EUR}}.');
    expect(document.states.greet!.on_enter).toEqual({ say: "Thanks for calling Tony's." });
    expect(document.states.greet!.transitions).toEqual({ on_tool_call: { choose_pizza: 'pizza', choose_salad: 'salad' } });
    // The branch's cases are the states the result may choose; its default is the call's move.
    expect(document.states.pizza!.transitions).toEqual({ on_tool_result: { place_order: ['confirm', 'pizza'] }, on_tool_call: { place_order: 'confirm' } });
    expect(document.states.pizza!.context).toBe('reset');
    expect(document.states.salad!.respond).toBe(false);
    expect(document.states.salad!.transitions).toEqual({ on_tool_call: { place_order: 'confirm' } });
    expect(document.states.confirm!.on_enter).toEqual({ end_session: true });
    // A function two nodes use is one shared tool; a global function is a global tool.
    expect(document.tools).toEqual({ delivery_estimate: { description: '' }, place_order: { description: '' } });
    expect(document.settings?.global_tools).toEqual({ delivery_estimate: {} });
    expect(document.states.greet!.tools).toEqual({ choose_pizza: { description: '' }, choose_salad: { description: '' } });
  });

  it('says, at its line and column, each function without a schema, the branch Voxflow reads its own way, and the moved post-action', () => {
    const { diagnostics } = imported(text);
    expect(at(diagnostics, 'pipecat_function_without_schema')).toEqual([place(text, 'choose_pizza'), place(text, 'choose_salad'), place(text, 'place_order', 23), place(text, 'delivery_estimate', 40)]);
    const branch = diagnostics.find((d) => d.code === 'pipecat_branch_adapted')!;
    expect(branch).toMatchObject({ line: lineOf(text, 'transition_to:', lineOf(text, 'name: place_order') - 1), column: 9 });
    expect(branch.message).toContain('where the result\'s `status` was "ok" it must say next_state: "confirm"');
    expect(branch.message).toContain('http action');
    expect(at(diagnostics, 'pipecat_action_moved')).toEqual([`${lineOf(text, 'type: end_conversation')}:9`]);
  });

  it('reads the same FlowConfig as JSON into the same flow', () => {
    const fromJson = imported(JSON.stringify(parseYaml(text), null, 2));
    expect(fromJson.format).toBe('declarative');
    expect(meaning(fromJson.document)).toEqual(meaning(imported(text).document));
  });

  it('gives unknown keys and bad values a diagnostic at their line and column, and still a flow', () => {
    const bad = [
      'initial_node: start',
      'version: 2',
      'nodes:',
      '  start:',
      '    task_messages: [{ role: system, content: Hi }]',
      '    respond_immediately: sometimes',
      '    context_strategy: RESET_ALL',
      '    mood: happy',
      '    functions:',
      '      - name: go',
      '        transition_to: { field: next_state, cases: { end: end, nowhere: nowhere }, why: x }',
      '      - name: go',
      '      - name: stay',
      '        transition_to: 42',
      '      - name: ask',
      '        description: asks',
      '      - 7',
      '  end:',
      '    role_message: 5',
      '    pre_actions: [{ type: play_music }]',
      '  later: not a node',
      'global_functions:',
      '  - name: help',
      '    transition_to: nowhere',
    ].join('\n');
    const { document, diagnostics } = imported(bad);
    const found = diagnostics.map((d) => `${d.line}:${d.column} ${d.code}`);
    expect(found).toEqual(
      expect.arrayContaining([
        `${place(bad, 'version')} pipecat_unmapped_key`,
        `${place(bad, 'sometimes')} pipecat_invalid_value`,
        `${place(bad, 'RESET_ALL')} pipecat_invalid_value`,
        `${place(bad, 'mood')} pipecat_unmapped_key`,
        `${place(bad, 'why')} pipecat_unmapped_key`,
        `${place(bad, 'nowhere }')} pipecat_unknown_target`,
        `${place(bad, 'go', 11)} pipecat_invalid_value`,
        `${place(bad, '42')} pipecat_invalid_value`,
        `${place(bad, 'description')} pipecat_unmapped_key`,
        `${place(bad, '7')} pipecat_invalid_value`,
        `${place(bad, 'end:', 12)} pipecat_invalid_value`,
        `${place(bad, '5', 17)} pipecat_invalid_value`,
        `${place(bad, '{ type: play_music }')} pipecat_unsupported_action`,
        `${place(bad, 'not a node')} pipecat_invalid_value`,
        `${place(bad, 'nowhere', 22)} pipecat_unknown_target`,
      ]),
    );
    // `description` is a key of the format before 1.0: the file is read as the newer one, and said.
    expect(found).toContain(`${place(bad, 'description')} pipecat_format_guessed`);
    // An exact branch (on next_state, each case its node) needs no adapting but an http action.
    expect(diagnostics.find((d) => d.code === 'pipecat_branch_adapted')?.message).not.toContain('must say next_state');
    expect(Object.keys(document.states)).toEqual(['start', 'end']);
    expect(document.states.start!.transitions).toEqual({ on_tool_result: { go: ['end'] } });
    expect(document.states.start!.respond).toBeUndefined();
  });

  it('lists a global function that branches in every state, and says so', () => {
    const { document, diagnostics } = imported(
      ['initial_node: a', 'nodes:', '  a: { task_messages: [] }', '  b: { task_messages: [] }', 'global_functions:', '  - name: route', '    transition_to: { field: next_state, cases: { a: a, b: b } }'].join('\n'),
    );
    expect(at(diagnostics, 'pipecat_global_function_copied')).toEqual(['7:5']);
    for (const state of Object.values(document.states)) {
      expect(state.agent.tools).toEqual(['route']);
      expect(state.transitions?.on_tool_result).toEqual({ route: ['a', 'b'] });
    }
    expect(document.settings?.global_tools).toBeUndefined();
  });

  it('renames a function Voxflow cannot name the same everywhere it is used', () => {
    const { document, diagnostics } = imported(['initial_node: a', 'nodes:', '  a:', '    task_messages: []', '    functions: [{ name: "look up", transition_to: b }]', '  b:', '    task_messages: []', '    functions: [{ name: "look up" }]'].join('\n'));
    expect(at(diagnostics, 'pipecat_renamed')).toEqual(['5:25']);
    expect(document.states.a!.agent.tools).toEqual(['look_up']);
    expect(document.states.b!.agent.tools).toEqual(['look_up']);
  });
});

describe('telling the two FlowConfig formats apart', () => {
  it('reads files with function schemas as the format before 1.0, and named functions as the newer one', () => {
    for (const name of ['food-ordering.flowconfig.json', 'patient-intake.flowconfig.yaml', 'movie-explorer-anthropic.flowconfig.json', 'gemini-declarations.flowconfig.json']) {
      expect(importPipecatFlow(fixture(name)).format, name).toBe('static');
    }
    expect(importPipecatFlow(fixture('editor-food-ordering.flow.json')).format).toBe('editor');
    expect(importPipecatFlow(fixture('pizza-order.flowconfig.yaml')).format).toBe('declarative');
    // Nothing to tell them apart by: both read it the same, as the newer format.
    expect(importPipecatFlow('initial_node: a\nnodes:\n  a:\n    task_messages: [{ role: system, content: Hi }]\n').format).toBe('declarative');
  });

  it('reads a file with signs of both as the newer format, and says where the old part is', () => {
    const mixed = ['initial_node: a', 'nodes:', '  a:', '    task_messages: []', '    context_strategy: reset', '    functions:', '      - name: go', '        description: Go on.'].join('\n');
    const result = importPipecatFlow(mixed);
    note(result.diagnostics);
    expect(result.format).toBe('declarative');
    expect(at(result.diagnostics, 'pipecat_format_guessed')).toEqual(['8:9']);
    expect(at(result.diagnostics, 'pipecat_unmapped_key')).toEqual(['8:9']);
  });
});

describe('exporting to the declarative YAML FlowConfig', () => {
  it.each(['guessing-game.yaml', 'appointment-booking.yaml'])('writes %s as a FlowConfig that Pipecat\'s JSON Schema accepts', (name) => {
    const exported = exportDeclarativeFlowText(resource(name));
    if (!exported.ok) throw new Error(`${name} has errors`);
    note(exported.diagnostics);
    expectValid(parseYaml(exported.yaml));
    expectValid(exported.flowConfig);
    expect(parseYaml(exported.yaml)).toEqual(exported.flowConfig);
  });

  it('writes a result that chooses as a branch on next_state, global tools as global functions, and says what it cannot carry', () => {
    const { flowConfig, diagnostics } = exportDeclarativeFlow(parseFlow(resource('appointment-booking.yaml')).document!);
    note(diagnostics);
    expect(flowConfig.nodes.welcome!.functions).toEqual([{ name: 'check_availability', transition_to: { field: 'next_state', cases: { offer_slot: 'offer_slot', ask_day: 'ask_day' } } }]);
    expect(flowConfig.global_functions).toEqual([{ name: 'talk_to_human', transition_to: 'human_handoff' }]);
    expect(flowConfig.nodes.booked!.pre_actions).toEqual([{ type: 'tts_say', text: 'You are booked for {day} at {slot}. We look forward to seeing you. Goodbye!' }, { type: 'end_conversation' }]);
    const paths = (code: string) => diagnostics.filter((d) => d.code === code).map((d) => d.path.join('.'));
    expect(paths('pipecat_no_equivalent')).toEqual(expect.arrayContaining(['settings.llm', 'settings.idle', 'tools.check_availability.http', 'states.welcome.interruptible', 'states.welcome.ui']));
    expect(paths('pipecat_placeholder_kept')).toContain('states.booked.on_enter.say');
  });

  it("writes a context variable as Pipecat's {{ variable }}, and a state's own definition of a shared name in the comment", () => {
    const flow = [
      'id: x',
      'version: "1.0.0"',
      'initial_state: a',
      'tools:',
      '  note: { description: Take a note. }',
      'states:',
      '  a:',
      '    agent: { prompt: "Hello {caller_name}.", tools: [note] }',
      '    transitions: { on_tool_call: { note: b } }',
      '  b:',
      '    agent: { prompt: Bye., tools: [note] }',
      '    tools:',
      '      note: { description: A note for b., parameters: { text: { type: string } } }',
    ].join('\n');
    const exported = exportDeclarativeFlowText(flow);
    if (!exported.ok) throw new Error('the flow has errors');
    note(exported.diagnostics);
    expectValid(exported.flowConfig);
    expect(exported.flowConfig.nodes.a!.task_messages[0]!.content).toBe('Hello {{ caller_name }}.');
    expect(exported.nodeFunctions).toEqual({ b: { note: { description: 'A note for b.', parameters: { text: { type: 'string' } } } } });
    const back = imported(exported.yaml).document;
    expect(meaning(back)).toEqual(meaning(parseFlow(flow).document!));
  });
});

describe('Voxflow → declarative FlowConfig → Voxflow', () => {
  it.each(['guessing-game.yaml', 'appointment-booking.yaml'])('%s keeps its states, tools, transitions, result branches, global tools and texts', (name) => {
    const original = parseFlow(resource(name)).document!;
    const exported = exportDeclarativeFlowText(resource(name));
    if (!exported.ok) throw new Error(`${name} has errors`);
    const back = imported(exported.yaml);
    expect(meaning(back.document)).toEqual(meaning(original));
    // The voxflow comment carried every function's definition.
    expect(back.diagnostics.filter((d) => d.code === 'pipecat_function_without_schema')).toEqual([]);
  });

  it('without the voxflow comment (as JSON) keeps the states and moves, with tools that have no parameters', () => {
    const original = parseFlow(resource('appointment-booking.yaml')).document!;
    const back = imported(JSON.stringify(exportDeclarativeFlow(original).flowConfig)).document;
    expect(Object.keys(back.states)).toEqual(Object.keys(original.states));
    expect(back.states.offer_slot!.transitions).toEqual(original.states.offer_slot!.transitions);
    expect(back.states.welcome!.transitions).toEqual(original.states.welcome!.transitions);
    expect(back.tools?.check_availability).toEqual({ description: '' });
  });

  const PARAMETER_NAMES = ['name', 'count', 'day', 'ok'];
  const parameter = fc.record(
    { type: fc.constantFrom('string', 'number', 'integer', 'boolean' as const), required: fc.constant(true), description: fc.string({ maxLength: 12 }) },
    { requiredKeys: ['type'] },
  );
  const tool = fc.record({ description: fc.string({ maxLength: 20 }), parameters: fc.dictionary(fc.constantFrom(...PARAMETER_NAMES), parameter, { minKeys: 1, maxKeys: 3 }) }, { requiredKeys: ['description'] });
  const flow: fc.Arbitrary<FlowDocument> = fc.integer({ min: 1, max: 5 }).chain((count) => {
    const names = Array.from({ length: count }, (_, i) => `state_${i}`);
    const state = fc
      .record({
        prompt: fc.string({ maxLength: 30 }),
        tools: fc.dictionary(fc.constantFrom('ask', 'save', 'next-step', 'done'), tool, { maxKeys: 3 }),
        targets: fc.array(fc.option(fc.constantFrom(...names)), { maxLength: 4 }),
        results: fc.array(fc.uniqueArray(fc.constantFrom(...names), { maxLength: 3 }), { maxLength: 4 }),
        say: fc.option(fc.string({ maxLength: 10 })),
        end: fc.boolean(),
        respond: fc.boolean(),
        reset: fc.boolean(),
      })
      .map(({ prompt, tools, targets, results, say, end, respond, reset }) => {
        const listed = Object.keys(tools);
        const moves = Object.fromEntries(listed.flatMap((t, i) => (targets[i] ? [[t, targets[i]!]] : [])));
        const chosen = Object.fromEntries(listed.flatMap((t, i) => (results[i]?.length ? [[t, results[i]!]] : [])));
        const clean = (s: string) => s.replace(/[{}]/g, '');
        return {
          agent: { prompt: clean(prompt), ...(listed.length ? { tools: listed } : {}) },
          ...(listed.length ? { tools } : {}),
          ...(Object.keys(moves).length || Object.keys(chosen).length
            ? { transitions: { ...(Object.keys(moves).length ? { on_tool_call: moves } : {}), ...(Object.keys(chosen).length ? { on_tool_result: chosen } : {}) } }
            : {}),
          ...(say !== null || end ? { on_enter: { ...(say !== null ? { say: clean(say) } : {}), ...(end ? { end_session: true } : {}) } } : {}),
          ...(respond ? {} : { respond: false }),
          ...(reset ? { context: 'reset' as const } : {}),
        };
      });
    return fc.tuple(fc.array(state, { minLength: count, maxLength: count }), fc.option(fc.constantFrom(...names))).map(([states, helpTarget]) => ({
      id: 'generated',
      version: '1.0.0',
      initial_state: 'state_0',
      tools: { help: { description: 'Help.' } },
      settings: { base_system_prompt: 'Be brief.', global_tools: { help: helpTarget === null ? {} : { target: helpTarget } } },
      states: Object.fromEntries(states.map((s, i) => [names[i]!, s])),
    }));
  });

  it('any flow of states, tools, moves, result branches, entries and a global tool comes back the same, through a FlowConfig the schema accepts (property)', () => {
    fc.assert(
      fc.property(flow, (document) => {
        const text = exportDeclarativeFlowText(JSON.stringify(document));
        if (!text.ok) throw new Error(JSON.stringify(text.diagnostics));
        expectValid(text.flowConfig);
        const back = importPipecatFlow(text.yaml);
        expect(back.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
        expect(meaning(parseFlow(back.yaml!).document!)).toEqual(meaning(document));
      }),
      { numRuns: scaledRuns(100) },
    );
  });
});

describe('declarative FlowConfig → Voxflow → declarative FlowConfig', () => {
  it('keeps the nodes, functions, transitions and texts of the pizza order', () => {
    const original = parseYaml(fixture('pizza-order.flowconfig.yaml'));
    const exported = exportDeclarativeFlowText(importPipecatFlow(fixture('pizza-order.flowconfig.yaml')).yaml!);
    if (!exported.ok) throw new Error('the import has errors');
    expectValid(exported.flowConfig);
    const back = exported.flowConfig;
    expect(back.initial_node).toBe(original.initial_node);
    expect(back.global_functions).toEqual(original.global_functions);
    expect(back.nodes.greet!.task_messages[0]!.content).toBe(original.nodes.greet.task_messages[0].content);
    expect(back.nodes.salad!.functions).toEqual(original.nodes.salad.functions);
    // The branch comes back as the choice Voxflow makes: on next_state, with its default.
    expect(back.nodes.pizza!.functions).toEqual([{ name: 'place_order', transition_to: { field: 'next_state', cases: { confirm: 'confirm', pizza: 'pizza' }, default: 'confirm' } }]);
    expect(back.nodes.pizza!.context_strategy).toBe('reset');
    expect(back.nodes.salad!.respond_immediately).toBe(false);
  });
});

describe('the voxflow comment', () => {
  const flow = (comment: string) =>
    `${comment}\ninitial_node: a\nnodes:\n  a:\n    task_messages: [{ role: system, content: Call look_up. }]\n    functions: [{ name: look_up, transition_to: a }]\n`;

  it('gives the tools their definitions', () => {
    const { document, diagnostics } = imported(flow('# voxflow:\n#   functions:\n#     look_up:\n#       description: Look it up.\n#       parameters:\n#         term: { type: string, required: true }'));
    expect(document.states.a!.tools).toEqual({ look_up: { description: 'Look it up.', parameters: { term: { type: 'string', required: true } } } });
    expect(diagnostics).toEqual([]);
  });

  it('that is not YAML is said at its line, and the functions come without it', () => {
    const { document, diagnostics } = imported(flow('# voxflow:\n#   functions:\n#     look_up: [unclosed'));
    expect(diagnostics.map((d) => `${d.line} ${d.code}`)).toEqual(['3 pipecat_companion_invalid', '8 pipecat_function_without_schema']);
    expect(document.states.a!.tools).toEqual({ look_up: { description: '' } });
  });

  it('with a tool the validator refuses is said at the tool, and that tool comes without it', () => {
    const { document, diagnostics } = imported(
      flow('# voxflow:\n#   functions:\n#     look_up:\n#       description: Look it up.\n#       colour: red\n#       http: { url: "ftp://example.com" }'),
    );
    expect(at(diagnostics, 'pipecat_companion_invalid')).toEqual(['3:7', '5:9']);
    expect(diagnostics.find((d) => d.line === 3)!.message).toContain('http');
    expect(document.states.a!.tools).toEqual({ look_up: { description: '' } });
  });
});

describe('the declarative FlowConfig diagnostic codes', () => {
  it('are each reported by some conversion above', () => {
    const codes = ['pipecat_format_guessed', 'pipecat_invalid_value', 'pipecat_function_without_schema', 'pipecat_companion_invalid', 'pipecat_branch_adapted', 'pipecat_global_function_copied'];
    for (const code of codes) expect(DIAGNOSTIC_CODES).toHaveProperty(code);
    expect(codes.filter((code) => !seen.has(code))).toEqual([]);
  });
});
