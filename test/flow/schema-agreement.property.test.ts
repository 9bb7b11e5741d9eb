import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FlowDocument } from '../../server/flow/schema.ts';
import { checkStructure } from '../../server/flow/structure.ts';

// structure.ts reads the zod schema instead of running it, to say what is wrong in a designer's
// words; zod itself must still agree with it about which documents are well-shaped.
const anyValue = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }));
/** Mostly a value of the right kind, now and then absent or of any kind, so both answers come up. */
const slot = <T,>(arb: fc.Arbitrary<T>, absent: number) =>
  fc.oneof(
    { weight: 24, arbitrary: arb as fc.Arbitrary<unknown> },
    { weight: absent, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: anyValue },
  );
const required = <T,>(arb: fc.Arbitrary<T>) => slot(arb, 1);
const optional = <T,>(arb: fc.Arbitrary<T>) => slot(arb, 12);
const name = fc.constantFrom('ask', 'done', 'save_name', 'name', 'ask', 'done', 'bad name', '2x');
/** Now and then a key the schema does not have, such as a typo. */
const stray = fc.oneof({ weight: 30, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.record({ tols: anyValue }) });
const withStray = <T extends object>(arb: fc.Arbitrary<T>) => fc.tuple(arb, stray).map(([value, extra]) => ({ ...extra, ...value }));
const map = <T,>(value: fc.Arbitrary<T>) => fc.dictionary(name, value, { maxKeys: 2 });

const parameter = withStray(fc.record({ type: required(fc.constantFrom('string', 'number', 'integer', 'boolean', 'text')), required: optional(fc.boolean()) }));
const tool = withStray(fc.record({ description: required(fc.string()), parameters: optional(map(parameter)), speech_cue: optional(fc.string()) }));
const state = withStray(fc.record({
  ui: optional(withStray(fc.record({ artifact_type: optional(fc.string()), prompt: optional(fc.string()) }))),
  agent: required(withStray(fc.record({ prompt: required(fc.string()), tools: optional(fc.array(name, { maxLength: 3 })) }))),
  tools: optional(map(tool)),
  transitions: optional(withStray(fc.record({ on_tool_call: optional(map(name)) }))),
}));
const document = withStray(fc.record({
  id: required(fc.string()),
  version: required(fc.string()),
  initial_state: required(name),
  settings: optional(withStray(fc.record({ base_system_prompt: optional(fc.string()) }))),
  states: required(fc.dictionary(name, state, { maxKeys: 3 })),
}));

describe('the flow schema', () => {
  it('accepts exactly the documents in which the structure check finds nothing wrong', () => {
    fc.assert(
      fc.property(document, (doc) => {
        const problems = checkStructure(doc);
        expect(FlowDocument.safeParse(doc).success, JSON.stringify(problems)).toBe(problems.length === 0);
      }),
      { numRuns: 1500 },
    );
  });

  it('accepts a complete flow and refuses one with a misspelt key', () => {
    const flow = {
      id: 'demo',
      version: '1.0.0',
      initial_state: 'ask',
      states: { ask: { agent: { prompt: 'Ask.', tools: ['save_name'] }, tools: { save_name: { description: 'Save.', parameters: { name: { type: 'string', required: true } } } } } },
    };
    expect(FlowDocument.safeParse(flow).success).toBe(true);
    expect(checkStructure(flow)).toEqual([]);
    const misspelt = { ...flow, inital_state: 'ask' };
    expect(FlowDocument.safeParse(misspelt).success).toBe(false);
    expect(checkStructure(misspelt).map((p) => p.code)).toEqual(['unknown_key']);
  });
});
