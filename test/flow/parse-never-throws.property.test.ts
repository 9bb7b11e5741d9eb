import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { parseFlow } from '../../server/flow/parse.ts';
import type { ParseResult } from '../../server/flow/types.ts';
import { DIAGNOSTIC_CODES } from '../../server/flow/diagnostic-codes.ts';
import { scaledRuns } from '../support/property-runs.ts';

const GAME = readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');
const GAME_LINES = GAME.split('\n');
const CODES = new Set(Object.keys(DIAGNOSTIC_CODES));

/**
 * What every result must satisfy, whatever the input. Checked in plain code and asserted once per
 * input: an expect() per field of every diagnostic (some 23,000 diagnostics a run of this file)
 * cost nearly as much CPU as the parsing it checks.
 */
function expectWellFormed(text: string, result: ParseResult): void {
  const lineCount = text.split('\n').length;
  const wrong = result.diagnostics.filter(
    (d) =>
      !CODES.has(d.code) ||
      (d.severity !== 'error' && d.severity !== 'warning') ||
      // yaml_syntax is the one code also reported as a warning (the yaml library's own warnings).
      (d.code !== 'yaml_syntax' && d.severity !== DIAGNOSTIC_CODES[d.code]) ||
      !(d.message.length > 0) ||
      !(d.line >= 1 && d.line <= lineCount + 1) ||
      !(d.column >= 1),
  );
  expect(wrong, `diagnostics with an unknown code, a wrong severity, no message or a place outside the ${lineCount} lines`).toEqual([]);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  // A document comes back exactly when there is no error.
  expect(result.document === null).toBe(errors.length > 0);
}

const yamlish = fc.string({
  unit: fc.constantFrom('a', 'b', ':', ' ', '\n', '-', '[', ']', '{', '}', '"', "'", '&', '*', '!', '#', '|', '>', '\t', '1', '.', ',', '?', 'é', '\u0000'),
  maxLength: 200,
});

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('swap' as const), at: fc.nat(), other: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: yamlish }),
  fc.record({ kind: fc.constant('indent' as const), at: fc.nat(), by: fc.integer({ min: -4, max: 4 }) }),
  fc.record({ kind: fc.constant('replaceWord' as const), at: fc.nat(), text: fc.constantFrom('setup', 'playing', 'won', 'nope', 'true', '1.0', 'null', '~', '[]', '{}', '*x', '&y') }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(lines: string[], m: Mutation): string[] {
  const out = [...lines];
  const i = m.at % out.length;
  switch (m.kind) {
    case 'delete': out.splice(i, 1); break;
    case 'duplicate': out.splice(i, 0, out[i]!); break;
    case 'swap': { const j = m.other % out.length; [out[i], out[j]] = [out[j]!, out[i]!]; break; }
    case 'insert': out.splice(i, 0, m.text); break;
    case 'indent': out[i] = m.by >= 0 ? ' '.repeat(m.by) + out[i] : out[i]!.slice(-m.by); break;
    case 'replaceWord': out[i] = out[i]!.replace(/[a-z_]+$/, m.text); break;
  }
  return out;
}

describe('parseFlow on any input', () => {
  it('never throws on random YAML-like text', () => {
    fc.assert(fc.property(yamlish, (text) => expectWellFormed(text, parseFlow(text))), { numRuns: scaledRuns(3000) });
  });

  it('never throws on the guessing game mutated line by line', () => {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 6 }), (mutations) => {
        const text = mutations.reduce(mutate, GAME_LINES).join('\n');
        expectWellFormed(text, parseFlow(text));
      }),
      { numRuns: scaledRuns(1500) },
    );
  });

  it('never throws on random JSON values written as YAML', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const text = stringify(value);
        expectWellFormed(text, parseFlow(text));
      }),
      { numRuns: scaledRuns(1500) },
    );
  });

  it('never throws on flow-shaped documents with random values in every slot', () => {
    const anyValue = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }));
    const maybe = <T,>(arb: fc.Arbitrary<T>) => fc.option(fc.oneof(arb as fc.Arbitrary<unknown>, anyValue), { nil: undefined });
    const name = fc.constantFrom('a', 'b', 'c', 'd', 'bad name', '');
    const state = fc.record({
      ui: maybe(fc.record({ artifact_type: maybe(fc.string()), prompt: maybe(fc.string()) })),
      agent: maybe(fc.record({ prompt: maybe(fc.string()), tools: maybe(fc.array(name, { maxLength: 4 })) })),
      tools: maybe(fc.dictionary(name, fc.record({
        description: maybe(fc.string()),
        parameters: maybe(fc.dictionary(name, fc.record({ type: maybe(fc.constantFrom('string', 'number', 'integer', 'boolean', 'text')), required: maybe(fc.boolean()) }))),
        speech_cue: maybe(fc.string()),
      }))),
      transitions: maybe(fc.record({ on_tool_call: maybe(fc.dictionary(name, name)) })),
    });
    const document = fc.record({
      id: maybe(fc.string()),
      version: maybe(fc.constantFrom('1.0.0', '2', 'x')),
      initial_state: maybe(name),
      settings: maybe(fc.record({ base_system_prompt: maybe(fc.string()) })),
      states: maybe(fc.dictionary(name, state, { maxKeys: 5 })),
    });
    fc.assert(
      fc.property(document, (doc) => {
        const text = stringify(doc);
        expectWellFormed(text, parseFlow(text));
      }),
      { numRuns: scaledRuns(2000) },
    );
  });
});
