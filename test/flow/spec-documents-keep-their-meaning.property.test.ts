import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FlowRuntime } from '../../server/flow/runtime.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import type { FlowDocument } from '../../server/flow/types.ts';
import { SpecFlowRuntime } from '../support/spec-runtime.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';

// The extended keys (docs/flows.md#extended-flow-keys) are optional: every document valid under the
// spec stays valid and means the same. The reference is the runtime as it was before the extension
// (test/support/spec-runtime.ts); for spec-only documents and any sequence of calls, the extended
// runtime must do exactly what it did.

const TOOL_POOL = ['ask', 'save', 'next', 'done', 'toString', 'ghost'];
const PARAMS = ['name', 'count', 'ok', 'n'];

const parameter = fc.record(
  { type: fc.constantFrom('string', 'number', 'integer', 'boolean' as const), required: fc.boolean() },
  { requiredKeys: ['type'] },
);
const tool = fc.record(
  {
    description: fc.string({ maxLength: 8 }),
    parameters: fc.dictionary(fc.constantFrom(...PARAMS), parameter, { maxKeys: 3 }),
    speech_cue: fc.constantFrom('Okay.', 'Saved {name}.', '', 'Count {count}'),
  },
  { requiredKeys: ['description'] },
);

/** A spec-only flow whose states are s0..s(n-1), transitions only to those. */
const specDocument: fc.Arbitrary<FlowDocument> = fc.integer({ min: 1, max: 4 }).chain((count) => {
  const stateNames = Array.from({ length: count }, (_, i) => `s${i}`);
  const state = fc
    .record({
      tools: fc.dictionary(fc.constantFrom(...TOOL_POOL.slice(0, 5)), tool, { maxKeys: 3 }),
      extraListed: fc.subarray(TOOL_POOL, { maxLength: 2 }),
      targets: fc.dictionary(fc.constantFrom(...TOOL_POOL), fc.constantFrom(...stateNames), { maxKeys: 3 }),
      prompt: fc.constantFrom('Ask {name}.', 'Count is {count}.', 'Hi'),
      ui: fc.option(fc.record({ artifact_type: fc.constantFrom('card', 'list'), prompt: fc.constantFrom('Hello {name}', '') }, { requiredKeys: [] }), { nil: undefined }),
    })
    .map(({ tools, extraListed, targets, prompt, ui }) => {
      const listed = [...Object.keys(tools), ...extraListed];
      const on_tool_call = Object.fromEntries(Object.entries(targets).filter(([t]) => listed.includes(t)));
      return {
        ...(ui ? { ui } : {}),
        agent: { prompt, tools: listed },
        tools,
        transitions: { on_tool_call },
      };
    });
  return fc.record({
    id: fc.constant('prop'),
    version: fc.constant('1.0.0'),
    initial_state: fc.constantFrom(...stateNames),
    settings: fc.record({ base_system_prompt: fc.constantFrom('Be brief, {name}.', '') }),
    states: fc.tuple(...stateNames.map(() => state)).map((states) => Object.fromEntries(stateNames.map((n, i) => [n, states[i]!]))),
  }) as fc.Arbitrary<FlowDocument>;
});

const argumentValue = fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -3, max: 3 }), fc.boolean(), fc.constant(null), fc.constant('3'));
type Step = { kind: 'turn' } | { kind: 'response' } | { kind: 'call'; name: string; args: string | Record<string, unknown> };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'turn' } as Step) },
  { weight: 2, arbitrary: fc.constant({ kind: 'response' } as Step) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('call' as const),
      name: fc.constantFrom(...TOOL_POOL),
      args: fc.oneof(fc.dictionary(fc.constantFrom(...PARAMS), argumentValue, { maxKeys: 3 }), fc.constantFrom('{', '', '[1]')),
    }),
  },
);

const NOTHING_ON_ENTRY = { say: null, endSession: false, respond: true, resetContext: false, interruptible: true };

/** The outcome as the spec knows it; `entered` (added by the extended keys) must ask for nothing on a spec-only state. */
function specOutcome(outcome: ReturnType<FlowRuntime['applyToolCall']>) {
  if (outcome.status === 'rejected') return outcome;
  const { entered, ...rest } = outcome;
  if (outcome.moved) expect(entered).toEqual({ state: outcome.toState, ...NOTHING_ON_ENTRY });
  else expect(entered).toBeUndefined();
  expect(rest.http).toBeUndefined();
  return rest;
}

function observe(runtime: FlowRuntime | SpecFlowRuntime) {
  return {
    state: runtime.state,
    variables: runtime.variables,
    path: runtime.path,
    systemPrompt: runtime.systemPrompt(),
    snapshot: runtime.snapshot(),
    tools: runtime.toolSchemas(),
    roundsLeft: runtime.toolRoundsLeft,
  };
}

describe('a document valid under the spec', () => {
  it('behaves exactly as before the extended flow language, call for call', () => {
    fc.assert(
      fc.property(specDocument, fc.record({ name: fc.string({ maxLength: 3 }) }, { requiredKeys: [] }), fc.array(step, { maxLength: 25 }), (doc, context, steps) => {
        const before = new SpecFlowRuntime(doc, { context });
        const after = new FlowRuntime(doc, { context });
        expect(observe(after)).toEqual(observe(before));
        for (const s of steps) {
          if (s.kind === 'turn') {
            before.beginUserTurn();
            after.beginUserTurn();
          } else if (s.kind === 'response') {
            before.beginModelResponse();
            after.beginModelResponse();
          } else {
            expect(specOutcome(after.applyToolCall(s.name, s.args))).toEqual(before.applyToolCall(s.name, s.args));
          }
          expect(observe(after)).toEqual(observe(before));
        }
        // Nothing of the extended keys happens on entering a spec-only state.
        expect(after.initialEntry).toEqual({ state: doc.initial_state, ...NOTHING_ON_ENTRY });
        // ...and the model requests carry nothing new.
        expect(after.modelOptions()).toEqual({});
        expect(after.idle()).toBeNull();
      }),
    );
  });

  it('still validates with no errors, and runs the same, when generated large', () => {
    const parsed = parseFlow(generateFlowYaml(40));
    expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const doc = parsed.document!;
    const before = new SpecFlowRuntime(doc);
    const after = new FlowRuntime(doc);
    for (let i = 0; i < 40; i++) {
      before.beginUserTurn();
      after.beginUserTurn();
      const name = i % 3 === 0 ? `skip${before.state.slice(1)}` : `next${before.state.slice(1)}`;
      expect(specOutcome(after.applyToolCall(name, { n: i }))).toEqual(before.applyToolCall(name, { n: i }));
      expect(observe(after)).toEqual(observe(before));
    }
  });
});
