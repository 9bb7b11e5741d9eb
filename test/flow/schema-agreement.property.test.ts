import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FlowDocument } from '../../server/flow/schema.ts';
import { checkStructure } from '../../server/flow/structure.ts';
import { scaledRuns } from '../support/property-runs.ts';

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

// the extended keys' values: numbers in and out of their ranges (and not whole), YAML's .inf and
// .nan.
const number = fc.oneof(fc.integer({ min: -10, max: 40_000 }), fc.double({ min: -1, max: 5 }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 0.5, 700));
const scalar = fc.oneof(fc.string(), number, fc.boolean());
const parameter = withStray(fc.record({
  type: required(fc.constantFrom('string', 'number', 'integer', 'boolean', 'text')),
  required: optional(fc.boolean()),
  description: optional(fc.string()),
  enum: optional(fc.array(scalar, { maxLength: 3 })),
}));
const http = withStray(fc.record({
  url: required(fc.constantFrom('https://example.com/x', 'ftp://x', 'nope')),
  method: optional(fc.constantFrom('POST', 'PUT', 'GET')),
  headers: optional(fc.dictionary(fc.constantFrom('Authorization', 'X-Id'), fc.string(), { maxKeys: 2 })),
  timeout_ms: optional(number),
  store: optional(map(fc.string())),
}));
const tool = withStray(fc.record({ description: required(fc.string()), parameters: optional(map(parameter)), speech_cue: optional(fc.string()), http: optional(http) }));
const turn = withStray(fc.record({
  min_interruption_words: optional(number),
  backchannels: optional(fc.constantFrom('ignore', 'interrupt', 'never')),
  endpointing_ms: optional(number),
  max_endpointing_ms: optional(number),
}));
const state = withStray(fc.record({
  ui: optional(withStray(fc.record({ artifact_type: optional(fc.string()), prompt: optional(fc.string()) }))),
  agent: required(withStray(fc.record({ prompt: required(fc.string()), tools: optional(fc.array(name, { maxLength: 3 })) }))),
  tools: optional(map(tool)),
  transitions: optional(withStray(fc.record({ on_tool_call: optional(map(name)), on_tool_result: optional(map(fc.array(name, { maxLength: 2 }))) }))),
  on_enter: optional(withStray(fc.record({ set: optional(map(scalar)), say: optional(fc.string()), end_session: optional(fc.boolean()) }))),
  respond: optional(fc.boolean()),
  interruptible: optional(fc.boolean()),
  endpointing_ms: optional(number),
  turn: optional(turn),
  context: optional(fc.constantFrom('keep', 'reset', 'forget')),
}));
const settings = withStray(fc.record({
  base_system_prompt: optional(fc.string()),
  llm: optional(withStray(fc.record({ model: optional(fc.string()), temperature: optional(number) }))),
  voice: optional(withStray(fc.record({ provider: optional(fc.string()), voice: optional(fc.string()) }))),
  stt: optional(withStray(fc.record({ model: optional(fc.string()) }))),
  language: optional(fc.string()),
  recording: optional(fc.boolean()),
  turn: optional(turn),
  idle: optional(withStray(fc.record({ after_secs: required(number), reprompt: optional(fc.string()), max_reprompts: optional(number) }))),
  global_tools: optional(map(withStray(fc.record({ target: optional(name) })))),
}));
const document = withStray(fc.record({
  id: required(fc.string()),
  version: required(fc.string()),
  initial_state: required(name),
  settings: optional(settings),
  tools: optional(map(tool)),
  states: required(fc.dictionary(name, state, { maxKeys: 3 })),
}));

describe('the flow schema', () => {
  it('accepts exactly the documents in which the structure check finds nothing wrong', () => {
    fc.assert(
      fc.property(document, (doc) => {
        const problems = checkStructure(doc);
        expect(FlowDocument.safeParse(doc).success, JSON.stringify(problems)).toBe(problems.length === 0);
      }),
      { numRuns: scaledRuns(3000) },
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
