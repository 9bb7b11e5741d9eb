// settings.outcome and settings.success (docs/flows.md#outcome-and-success): accepted as
// documented, refused with the line and column of what is wrong, and the plain criteria judged
// on what a call did with no model.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { evaluatePlain, outcomeJsonSchema, outcomeValueProblem, overallSuccess, valueFromVariable } from '../../server/flow/outcome.ts';

const FLOW = `id: booking
version: "1.0.0"
initial_state: ask
settings:
  outcome:
    booked: { type: boolean, required: true }
    slot: { type: string, description: The time the caller booked }
    party: { type: integer }
    kind: { type: enum, values: [table, terrace] }
    day: { type: date }
  success:
    - outcome: booked == true
    - reached: confirmed
    - transferred: false
    - judge: The caller's question was answered
states:
  ask:
    agent: { prompt: Ask for a time., tools: [book] }
    tools: { book: { description: Book it., parameters: { slot: { type: string, required: true } } } }
    transitions: { on_tool_call: { book: confirmed } }
  confirmed:
    on_enter: { say: "Booked.", end_session: true }
    agent: { prompt: Say goodbye. }
`;

describe('settings.outcome and settings.success', () => {
  it('are accepted with no diagnostic and kept on the document', () => {
    const result = parseFlow(FLOW);
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.settings?.outcome?.booked).toEqual({ type: 'boolean', required: true });
    expect(result.document?.settings?.success).toHaveLength(4);
  });

  it('refuse an unknown outcome type at its value, naming the types there are', () => {
    const result = parseFlow(FLOW.replace('booked: { type: boolean', 'booked: { type: yesno'));
    expect(result.document).toBeNull();
    expect(result.diagnostics).toMatchObject([{ code: 'invalid_outcome_type', severity: 'error', line: 6, column: 21, path: ['settings', 'outcome', 'booked', 'type'] }]);
    expect(result.diagnostics[0]!.message).toContain('string, number, integer, boolean, enum, date');
  });

  it.each([
    ['an enum without values', 'kind: { type: enum, values: [table, terrace] }', 'kind: { type: enum }', 'enum without values', 9],
    ['an enum with an empty list', 'values: [table, terrace]', 'values: []', 'empty values', 9],
    ['values on a non-enum', 'party: { type: integer }', 'party: { type: integer, values: [a] }', 'only an enum has values', 8],
  ])('refuse %s', (_what, from, to, says, line) => {
    const result = parseFlow(FLOW.replace(from, to));
    expect(result.document).toBeNull();
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ code: 'invalid_outcome_field', line });
    expect(result.diagnostics[0]!.message).toContain(says);
  });

  it.each([
    ['a condition that is not FIELD == VALUE', '- outcome: booked == true', '- outcome: booked is true', 'not FIELD == VALUE'],
    ['a field the outcome does not declare', '- outcome: booked == true', '- outcome: paid == true', '"paid" is not a field of settings.outcome'],
    ['a value of the wrong type', '- outcome: booked == true', '- outcome: booked == maybe', 'can never be "maybe"'],
    ['an enum value it does not list', '- outcome: booked == true', '- outcome: kind == garden', 'can never be "garden"'],
    ['an unknown state', '- reached: confirmed', '- reached: confirmd', '"confirmd" is not one of the states'],
    ['two keys in one item', '- reached: confirmed', '- { reached: confirmed, transferred: true }', 'one key, not reached and transferred'],
  ])('refuse %s at its line and column', (_what, from, to, says) => {
    const result = parseFlow(FLOW.replace(from, to));
    expect(result.document).toBeNull();
    expect(result.diagnostics).toHaveLength(1);
    const [problem] = result.diagnostics;
    expect(problem).toMatchObject({ code: 'invalid_success_criterion', severity: 'error' });
    expect(problem!.line).toBeGreaterThanOrEqual(12);
    expect(problem!.line).toBeLessThanOrEqual(15);
    expect(problem!.column).toBeGreaterThan(4);
    expect(problem!.message).toContain(says);
  });

  it('refuse an unknown criterion key as any unknown key is', () => {
    const result = parseFlow(FLOW.replace('- transferred: false', '- not_transferred: true'));
    expect(result.diagnostics).toMatchObject([{ code: 'unknown_key', line: 14 }]);
  });
});

describe('the plain criteria', () => {
  const facts = { outcome: { booked: true, kind: undefined }, states: new Set(['ask', 'confirmed']), transferred: false };

  it('are met or not from the outcome, the states and a transfer, each with its reason', () => {
    expect(evaluatePlain({ outcome: 'booked == true' }, facts)).toEqual({ met: true, reason: 'outcome.booked is true' });
    expect(evaluatePlain({ outcome: 'booked != true' }, facts).met).toBe(false);
    expect(evaluatePlain({ reached: 'confirmed' }, facts).met).toBe(true);
    expect(evaluatePlain({ reached: 'other' }, facts)).toEqual({ met: false, reason: 'the call never reached the state "other"' });
    expect(evaluatePlain({ transferred: false }, facts).met).toBe(true);
    expect(evaluatePlain({ transferred: true }, facts).met).toBe(false);
  });

  it('are unknown on an unknown field, and one unmet criterion makes the call unsuccessful', () => {
    expect(evaluatePlain({ outcome: 'kind == table' }, facts)).toEqual({ met: 'unknown', reason: 'outcome.kind is unknown' });
    expect(overallSuccess([true, 'unknown'])).toBe('unknown');
    expect(overallSuccess([true, 'unknown', false])).toBe(false);
    expect(overallSuccess([true, true])).toBe(true);
  });
});

describe('outcome values', () => {
  it('are checked against their field', () => {
    expect(outcomeValueProblem({ type: 'integer' }, 2.5)).toContain('whole number');
    expect(outcomeValueProblem({ type: 'date' }, '2026-02-30')).toContain('YYYY-MM-DD');
    expect(outcomeValueProblem({ type: 'date' }, '2026-02-28')).toBeNull();
    expect(outcomeValueProblem({ type: 'enum', values: ['a'] }, 'b')).toContain('one of a');
  });

  it('take a variable that reads plainly as their type', () => {
    expect(valueFromVariable({ type: 'integer' }, '4')).toBe(4);
    expect(valueFromVariable({ type: 'boolean' }, 'true')).toBe(true);
    expect(valueFromVariable({ type: 'boolean' }, 'yes')).toBeUndefined();
    expect(valueFromVariable({ type: 'string' }, '')).toBeUndefined();
  });

  it('are asked of the model with a strict schema: every field required, null allowed', () => {
    expect(outcomeJsonSchema({ kind: { type: 'enum', values: ['a', 'b'] }, n: { type: 'number' } })).toEqual({
      type: 'object',
      properties: {
        kind: { type: ['string', 'null'], enum: ['a', 'b', null], description: 'null when the call did not settle it.' },
        n: { type: ['number', 'null'], description: 'null when the call did not settle it.' },
      },
      required: ['kind', 'n'],
      additionalProperties: false,
    });
  });
});
