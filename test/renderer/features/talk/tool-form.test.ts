// The simulator's argument form: fields from the flow's tool definitions, typed text turned into
// the arguments of simulate_tool, and the promise that a form the studio accepts is one the
// server's runtime accepts too (the same coercion rules, checked against tool-arguments.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../server/flow/parse.ts';
import { checkArguments } from '../../../../server/flow/tool-arguments.ts';
import type { ParameterType } from '../../../../server/flow/types.ts';
import { GUESSING_GAME_YAML } from '../../../support/server.ts';
import {
  formatArguments,
  initialInputs,
  otherTools,
  readJsonArguments,
  readToolForm,
  toolForm,
  type FormField,
} from '../../../../renderer/src/features/talk/tool-form.ts';

const game = parseFlow(GUESSING_GAME_YAML).document!;

describe("a tool's form", () => {
  it('has a field per parameter, typed and with required ones marked, and says where the tool leads', () => {
    expect(toolForm(game, 'setup', 'begin_game')).toEqual({
      known: true,
      description: expect.stringContaining('Start the game with the secret thing'),
      fields: [
        { name: 'secret_thing', type: 'string', required: true },
        { name: 'questions_asked', type: 'string', required: false },
      ],
      target: 'playing',
    });
    expect(toolForm(game, 'playing', 'record_answer')).toMatchObject({ target: null, fields: [{ name: 'last_answer', required: true }, { name: 'questions_asked', required: true }] });
    expect(toolForm(game, 'playing', 'guess_correct')).toMatchObject({ known: true, fields: [], target: 'won' });
  });

  it("takes another state's definition for a tool this state does not have, leading nowhere", () => {
    expect(toolForm(game, 'setup', 'guess_wrong')).toMatchObject({ known: true, fields: [{ name: 'wrong_guess', type: 'string', required: true }], target: null });
  });

  it('is unknown without a document (the YAML in the editor does not parse), or for a tool nobody defines', () => {
    expect(toolForm(null, 'setup', 'begin_game')).toEqual({ known: false, description: '', fields: [], target: null });
    expect(toolForm(game, 'setup', 'fly_away')).toMatchObject({ known: false });
    // Prototype names are not tools.
    expect(toolForm(game, 'setup', 'constructor')).toMatchObject({ known: false });
  });

  it('lists the tools other states define, to try one and see it rejected', () => {
    expect(otherTools(game, ['begin_game'])).toEqual(['guess_correct', 'guess_wrong', 'out_of_questions', 'play_again', 'record_answer']);
    expect(otherTools(null, ['begin_game'])).toEqual([]);
  });

  it("starts each field from the session's variable of the same name", () => {
    const fields = toolForm(game, 'playing', 'record_answer').fields;
    expect(initialInputs(fields, { questions_asked: '3', secret_thing: 'a cat' })).toEqual({ last_answer: '', questions_asked: '3' });
    expect(initialInputs([{ name: 'n', type: 'integer', required: false }], { n: 4 })).toEqual({ n: '4' });
  });
});

describe('reading the form', () => {
  const fields: FormField[] = [
    { name: 'name', type: 'string', required: true },
    { name: 'count', type: 'integer', required: false },
    { name: 'weight', type: 'number', required: false },
    { name: 'sure', type: 'boolean', required: false },
  ];

  it('sends text as typed, numbers as numbers, booleans as booleans, and leaves empty fields out', () => {
    expect(readToolForm(fields, { name: ' a cat ', count: '3', weight: '2.5', sure: 'true' })).toEqual({ ok: true, arguments: { name: ' a cat ', count: 3, weight: 2.5, sure: true } });
    expect(readToolForm(fields, { name: 'x', count: '', weight: '  ', sure: '' })).toEqual({ ok: true, arguments: { name: 'x' } });
    expect(readToolForm(fields, { name: 'x', count: '3.0', weight: '-2e3', sure: 'false' })).toEqual({ ok: true, arguments: { name: 'x', count: 3, weight: -2000, sure: false } });
  });

  it('says per field what is missing or unreadable, and what sending anyway would send', () => {
    expect(readToolForm(fields, { name: '   ', count: '3.5', weight: 'heavy', sure: 'maybe' })).toEqual({
      ok: false,
      problems: { name: 'Required', count: 'Enter a whole number, like 3', weight: 'Enter a number, like 3 or 2.5', sure: 'Choose true or false' },
      arguments: { count: '3.5', weight: 'heavy', sure: 'maybe' },
    });
    expect(readToolForm(fields, {})).toMatchObject({ ok: false, problems: { name: 'Required' } });
    expect(readToolForm(fields, { name: 'x', count: '0x10', weight: 'Infinity' })).toMatchObject({ ok: false, problems: { count: expect.any(String), weight: expect.any(String) } });
    expect(readToolForm(fields, { name: 'x', count: '9007199254740993' })).toMatchObject({ ok: false, problems: { count: 'Enter a whole number, like 3' } });
  });

  it('accepts exactly what the server accepts: an accepted form passes the runtime check unchanged', () => {
    const type = fc.constantFrom<ParameterType>('string', 'number', 'integer', 'boolean');
    const text = fc.oneof(fc.string({ maxLength: 12 }), fc.integer().map(String), fc.double({ noNaN: true }).map(String), fc.constantFrom('true', 'false', '1e3', ' 7 ', '.5', '-0'));
    fc.assert(
      fc.property(type, fc.boolean(), text, (parameterType, required, input) => {
        const field: FormField = { name: 'p', type: parameterType, required };
        const reading = readToolForm([field], { p: input });
        const checked = checkArguments({ p: { type: parameterType, required } }, reading.arguments);
        if (reading.ok) {
          expect(checked.problems).toEqual([]);
          if ('p' in reading.arguments) expect(checked.values.p).toEqual(reading.arguments.p);
        } else {
          // What the form refuses, the server refuses too when it is sent anyway.
          expect(checked.problems.length).toBeGreaterThan(0);
        }
      }),
    );
  });
});

describe('JSON arguments (no definition known)', () => {
  it('takes an object or nothing, and says what is wrong otherwise', () => {
    expect(readJsonArguments('')).toEqual({ ok: true, arguments: {} });
    expect(readJsonArguments('{"secret_thing": "a cat"}')).toEqual({ ok: true, arguments: { secret_thing: 'a cat' } });
    expect(readJsonArguments('{secret_thing: 1}')).toEqual({ ok: false, problem: 'Not valid JSON' });
    expect(readJsonArguments('[1, 2]')).toMatchObject({ ok: false, problem: expect.stringContaining('JSON object') });
    expect(readJsonArguments('null')).toMatchObject({ ok: false });
  });
});

describe('arguments in the tool-call log', () => {
  it('reads as name = value pairs', () => {
    expect(formatArguments({ secret_thing: 'a cat', questions_asked: 0, sure: true })).toBe('secret_thing = a cat · questions_asked = 0 · sure = true');
    expect(formatArguments({})).toBe('');
    expect(formatArguments(null)).toBe('');
    expect(formatArguments('{"broken json')).toBe('{"broken json');
  });
});
