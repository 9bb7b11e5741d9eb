import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseFlow } from '../../server/flow/parse.ts';
import { exportPipecatFlow, exportPipecatFlowText, importPipecatFlow } from '../../server/flow/pipecat/index.ts';
import type { FlowDocument } from '../../server/flow/types.ts';
import { scaledRuns } from '../support/property-runs.ts';

// Round trips: what a designer built in one tool survives a trip through the other.
const fixture = (name: string) => readFileSync(new URL(`./pipecat/${name}`, import.meta.url), 'utf8');
const resource = (name: string) => readFileSync(new URL(`../../resources/flows/${name}`, import.meta.url), 'utf8');

function toVoxflow(text: string): FlowDocument {
  const { yaml, diagnostics } = importPipecatFlow(text);
  expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const parsed = parseFlow(yaml!);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return parsed.document!;
}

/** A FlowConfig's content as any of its function forms says it: nodes, functions, moves, messages. */
function meaning(config: Record<string, unknown>) {
  const nodes = config.nodes as Record<string, Record<string, unknown>>;
  const text = (messages: unknown) =>
    ((messages as Array<{ content: unknown }> | undefined) ?? [])
      .map((m) => (typeof m.content === 'string' ? m.content : (m.content as Array<{ text: string }>).map((p) => p.text).join('\n')))
      .join('\n\n');
  const functions = (list: unknown) =>
    ((list as Array<Record<string, unknown>> | undefined) ?? [])
      .flatMap((entry) => (entry.function_declarations as Array<Record<string, unknown>>) ?? [(entry.function as Record<string, unknown>) ?? entry])
      .map((fn) => {
        const schema = ((fn.parameters ?? fn.input_schema) as Record<string, unknown> | null) ?? {};
        const properties = Object.fromEntries(
          Object.entries((schema.properties as Record<string, Record<string, unknown>>) ?? {}).map(([name, p]) => [name, { type: p.type, description: p.description, enum: p.enum }]),
        );
        return { name: fn.name, description: fn.description, properties, required: [...((schema.required as string[]) ?? [])].sort(), to: fn.transition_to ?? null };
      });
  return {
    initial: config.initial_node,
    role: text(nodes[config.initial_node as string]!.role_messages),
    nodes: Object.fromEntries(Object.entries(nodes).map(([name, node]) => [name, { task: text(node.task_messages), functions: functions(node.functions) }])),
  };
}

/** What a Voxflow flow is made of, as far as a FlowConfig can carry it. */
function structure(document: FlowDocument) {
  return {
    initial: document.initial_state,
    states: Object.fromEntries(
      Object.entries(document.states).map(([name, state]) => [
        name,
        {
          tools: Object.fromEntries(
            (state.agent.tools ?? []).map((tool) => {
              const definition = state.tools?.[tool] ?? document.tools?.[tool];
              return [tool, { description: definition?.description, parameters: definition?.parameters ?? {} }];
            }),
          ),
          moves: state.transitions?.on_tool_call ?? {},
        },
      ]),
    ),
  };
}

describe('Pipecat → Voxflow → Pipecat', () => {
  it.each(['food-ordering.flowconfig.json', 'patient-intake.flowconfig.yaml', 'movie-explorer-anthropic.flowconfig.json', 'gemini-declarations.flowconfig.json'])(
    '%s keeps its nodes, functions, transitions and messages',
    (name) => {
      const original = fixture(name);
      const source = parseYaml(original) as Record<string, unknown>;
      const back = exportPipecatFlow(toVoxflow(original)).flowConfig;
      const before = meaning(source);
      const after = meaning(back as unknown as Record<string, unknown>);
      // The one adaptation these examples need: an array parameter travels as text.
      if (name.startsWith('patient-intake')) {
        const prescriptions = before.nodes.get_prescriptions!.functions[0]!.properties.prescriptions!;
        expect(after.nodes.get_prescriptions!.functions[0]!.properties.prescriptions).toEqual({ ...prescriptions, type: 'string' });
        after.nodes.get_prescriptions!.functions[0]!.properties.prescriptions = prescriptions;
      }
      expect(after).toEqual(before);
    },
  );

  it('keeps how a node ends the call', () => {
    const back = exportPipecatFlow(toVoxflow(fixture('food-ordering.flowconfig.json'))).flowConfig;
    expect([...(back.nodes.end!.pre_actions ?? []), ...(back.nodes.end!.post_actions ?? [])]).toContainEqual({ type: 'end_conversation' });
  });
});

describe('Voxflow → Pipecat → Voxflow', () => {
  it('the guessing game keeps its states, tools, parameters and transitions', () => {
    const original = parseFlow(resource('guessing-game.yaml')).document!;
    const exported = exportPipecatFlowText(resource('guessing-game.yaml'));
    if (!exported.ok) throw new Error('the guessing game has errors');
    for (const text of [exported.json, exported.yaml]) {
      const back = toVoxflow(text);
      expect(structure(back)).toEqual(structure(original));
      expect(back.settings?.base_system_prompt).toBe(original.settings?.base_system_prompt);
      // Its placeholders are all tool parameters, so the prompts come back with them.
      for (const [name, state] of Object.entries(original.states)) expect(back.states[name]!.agent.prompt).toBe(state.agent.prompt);
    }
  });

  it('the appointment booking keeps its states and the moves a FlowConfig can hold', () => {
    const original = parseFlow(resource('appointment-booking.yaml')).document!;
    const back = toVoxflow(JSON.stringify(exportPipecatFlow(original).flowConfig));
    expect(Object.keys(back.states)).toEqual(Object.keys(original.states));
    expect(back.states.offer_slot!.transitions?.on_tool_call).toEqual({ confirm_booking: 'booked', another_day: 'ask_day', talk_to_human: 'human_handoff' });
    // {day} is a tool parameter and comes back a placeholder; {slot} was stored from the http
    // result, which a FlowConfig cannot do, so it comes back as the text it was in Pipecat.
    expect(back.states.booked!.on_enter).toEqual({ say: 'You are booked for {day} at {{slot}}. We look forward to seeing you. Goodbye!', end_session: true });
  });

  const PARAMETER_NAMES = ['name', 'count', 'day', 'ok'];
  const parameter = fc.record(
    {
      type: fc.constantFrom('string', 'number', 'integer', 'boolean' as const),
      required: fc.constant(true),
      description: fc.string({ maxLength: 12 }),
    },
    { requiredKeys: ['type'] },
  );
  const tool = fc.record(
    { description: fc.string({ maxLength: 20 }), parameters: fc.dictionary(fc.constantFrom(...PARAMETER_NAMES), parameter, { minKeys: 1, maxKeys: 3 }) },
    { requiredKeys: ['description'] },
  );
  const flow: fc.Arbitrary<FlowDocument> = fc.integer({ min: 1, max: 5 }).chain((count) => {
    const names = Array.from({ length: count }, (_, i) => `state_${i}`);
    const state = fc
      .record({
        prompt: fc.string({ maxLength: 30 }),
        tools: fc.dictionary(fc.constantFrom('ask', 'save', 'next-step', 'done'), tool, { maxKeys: 3 }),
        targets: fc.array(fc.constantFrom(...names), { maxLength: 4 }),
      })
      .map(({ prompt, tools, targets }) => {
        const listed = Object.keys(tools);
        const moves = Object.fromEntries(listed.flatMap((t, i) => (targets[i] ? [[t, targets[i]!]] : [])));
        return {
          agent: { prompt: prompt.replace(/[{}]/g, ''), ...(listed.length ? { tools: listed } : {}) },
          ...(listed.length ? { tools } : {}),
          ...(Object.keys(moves).length ? { transitions: { on_tool_call: moves } } : {}),
        };
      });
    return fc.array(state, { minLength: count, maxLength: count }).map((states) => ({
      id: 'generated',
      version: '1.0.0',
      initial_state: 'state_0',
      states: Object.fromEntries(states.map((s, i) => [names[i]!, s])),
    }));
  });

  it('any flow of states, tools, parameters and moves comes back the same (property)', () => {
    fc.assert(
      fc.property(flow, (document) => {
        const back = toVoxflow(JSON.stringify(exportPipecatFlow(document).flowConfig));
        expect(structure(back)).toEqual(structure(document));
        for (const [name, state] of Object.entries(document.states)) expect(back.states[name]!.agent.prompt).toBe(state.agent.prompt);
      }),
      { numRuns: scaledRuns(150) },
    );
  });
});
