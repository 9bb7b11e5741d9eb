import { describe, it, expect } from 'vitest';
import { FlowRuntime } from '../../server/flow/runtime.ts';
import type { ToolCallOutcome } from '../../server/flow/runtime.ts';
import type { FlowDocument, ParameterType } from '../../server/flow/types.ts';

// One state with one optional parameter per type (tool `set_<type>`), and a tool with two
// required parameters that moves, so a rejection visibly does not move.
function argumentsFlow(): FlowDocument {
  const typed = (type: ParameterType) => ({
    description: `Set a ${type}.`,
    parameters: { value: { type } },
    speech_cue: 'Value is {value}.',
  });
  return {
    id: 'arguments',
    version: '1.0.0',
    initial_state: 'form',
    states: {
      form: {
        agent: {
          prompt: 'Fill the form.',
          tools: ['set_string', 'set_number', 'set_integer', 'set_boolean', 'book'],
        },
        tools: {
          set_string: typed('string'),
          set_number: typed('number'),
          set_integer: typed('integer'),
          set_boolean: typed('boolean'),
          book: {
            description: 'Book a table.',
            parameters: {
              guest_name: { type: 'string', required: true },
              party_size: { type: 'integer', required: true },
              window_seat: { type: 'boolean' },
            },
          },
        },
        transitions: { on_tool_call: { book: 'booked' } },
      },
      booked: { agent: { prompt: 'Confirm the booking for {guest_name}.' } },
    },
  };
}

function rejection(outcome: ToolCallOutcome) {
  if (outcome.status !== 'rejected') throw new Error(`expected a rejection, got accepted into ${outcome.toState}`);
  return outcome;
}

describe('lossless coercion of arguments', () => {
  it.each<[ParameterType, unknown, string | number | boolean]>([
    ['string', 'plain text', 'plain text'],
    ['string', '', ''],
    ['string', 42, '42'],
    ['string', 3.5, '3.5'],
    ['string', true, 'true'],
    ['number', 3.5, 3.5],
    ['number', -2, -2],
    ['number', '3.5', 3.5],
    ['number', ' -2e3 ', -2000],
    ['integer', 3, 3],
    ['integer', '3', 3],
    ['integer', '-12', -12],
    ['integer', 4.0, 4],
    ['boolean', true, true],
    ['boolean', false, false],
    ['boolean', 'true', true],
    ['boolean', 'false', false],
  ])('a %s parameter given %j stores %j', (type, given, stored) => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = runtime.applyToolCall(`set_${type}`, { value: given });
    expect(outcome.status).toBe('accepted');
    expect(outcome.arguments).toEqual({ value: stored });
    expect(runtime.variables).toEqual({ value: stored });
  });

  it('renders the speech cue with the coerced value', () => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = runtime.applyToolCall('set_integer', '{"value":"7"}');
    expect(outcome.status === 'accepted' && outcome.speechCue).toBe('Value is 7.');
  });
});

describe('mistyped arguments', () => {
  it.each<[ParameterType, unknown, string]>([
    ['string', { a: 1 }, "argument 'value' must be a string, got an object"],
    ['string', ['a'], "argument 'value' must be a string, got an array"],
    ['number', 'three', 'argument \'value\' must be a number, got the string "three"'],
    ['number', '', 'argument \'value\' must be a number, got the string ""'],
    ['number', '0x10', 'argument \'value\' must be a number, got the string "0x10"'],
    ['number', 'Infinity', 'argument \'value\' must be a number, got the string "Infinity"'],
    ['number', '1e999', 'argument \'value\' must be a number, got the string "1e999"'],
    ['number', true, "argument 'value' must be a number, got the boolean true"],
    ['integer', 3.5, "argument 'value' must be an integer, got the number 3.5"],
    ['integer', '3.5', 'argument \'value\' must be an integer, got the string "3.5"'],
    ['integer', 2 ** 60, `argument 'value' must be an integer, got the number ${2 ** 60}`],
    ['integer', [3], "argument 'value' must be an integer, got an array"],
    ['boolean', 'yes', 'argument \'value\' must be a boolean, got the string "yes"'],
    ['boolean', 'TRUE', 'argument \'value\' must be a boolean, got the string "TRUE"'],
    ['boolean', 1, "argument 'value' must be a boolean, got the number 1"],
  ])('a %s parameter given %j is rejected', (type, given, problem) => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = rejection(runtime.applyToolCall(`set_${type}`, { value: given }));
    expect(outcome.code).toBe('mistyped_argument');
    expect(outcome.reason).toBe(`invalid arguments for tool 'set_${type}': ${problem}`);
    expect(outcome.result).toEqual({ ok: false, error: outcome.reason });
    expect(runtime.variables).toEqual({});
  });
});

describe('required arguments', () => {
  it('rejects a call missing a required argument without moving or storing', () => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = rejection(runtime.applyToolCall('book', { guest_name: 'Ada', window_seat: true }));
    expect(outcome.code).toBe('missing_argument');
    expect(outcome.reason).toBe("invalid arguments for tool 'book': missing required argument 'party_size' (integer)");
    expect(outcome.toState).toBe('form');
    expect(runtime.state).toBe('form');
    expect(runtime.variables).toEqual({});
  });

  it('treats a null argument as missing', () => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = rejection(runtime.applyToolCall('book', '{"guest_name":null,"party_size":2}'));
    expect(outcome.reason).toBe("invalid arguments for tool 'book': missing required argument 'guest_name' (string)");
  });

  it('reports every problem of one call together, naming missing_argument as the code', () => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = rejection(runtime.applyToolCall('book', { party_size: 'two', window_seat: 'maybe' }));
    expect(outcome.code).toBe('missing_argument');
    expect(outcome.reason).toBe(
      "invalid arguments for tool 'book': missing required argument 'guest_name' (string); " +
        'argument \'party_size\' must be an integer, got the string "two"; ' +
        'argument \'window_seat\' must be a boolean, got the string "maybe"',
    );
  });

  it('accepts a call without an optional argument and moves, keeping earlier variables', () => {
    const runtime = new FlowRuntime(argumentsFlow(), { context: { window_seat: 'unknown' } });
    const outcome = runtime.applyToolCall('book', { guest_name: 'Ada', party_size: '2' });
    expect(outcome).toMatchObject({ status: 'accepted', toState: 'booked', arguments: { guest_name: 'Ada', party_size: 2 } });
    expect(runtime.variables).toEqual({ window_seat: 'unknown', guest_name: 'Ada', party_size: 2 });
    expect(runtime.systemPrompt()).toBe('Confirm the booking for Ada.');
  });

  it('overwrites an existing variable with a new argument value', () => {
    const runtime = new FlowRuntime(argumentsFlow(), { context: { value: 'from context' } });
    runtime.applyToolCall('set_string', { value: 'from the model' });
    expect(runtime.variables).toEqual({ value: 'from the model' });
  });
});

describe('the shape of the arguments', () => {
  it.each<[string, string, string]>([
    ['bad JSON', '{"value": ', "arguments for tool 'set_string' are not valid JSON; send a JSON object"],
    ['a JSON array', '["x"]', "arguments for tool 'set_string' must be a JSON object, not an array; send a JSON object"],
    ['a JSON number', '42', "arguments for tool 'set_string' must be a JSON object, not the number 42; send a JSON object"],
    ['a JSON string', '"x"', 'arguments for tool \'set_string\' must be a JSON object, not the string "x"; send a JSON object'],
  ])('rejects %s as invalid_arguments', (_kind, args, reason) => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = rejection(runtime.applyToolCall('set_string', args));
    expect(outcome.code).toBe('invalid_arguments');
    expect(outcome.reason).toBe(reason);
    expect(runtime.variables).toEqual({});
  });

  it('reports what was given: parsed when it parsed, else the raw text', () => {
    const runtime = new FlowRuntime(argumentsFlow());
    expect(rejection(runtime.applyToolCall('set_string', '["x"]')).arguments).toEqual(['x']);
    expect(rejection(runtime.applyToolCall('set_string', '{oops')).arguments).toBe('{oops');
    expect(rejection(runtime.applyToolCall('nope', '{"a":1}')).arguments).toEqual({ a: 1 });
  });

  it.each([
    ['an empty string', ''],
    ['whitespace', '  '],
    ['null', null],
    ['undefined', undefined],
    ['the JSON text null', 'null'],
  ])('reads %s as no arguments', (_kind, args) => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = runtime.applyToolCall('set_boolean', args);
    expect(outcome).toMatchObject({ status: 'accepted', arguments: {} });
    expect(runtime.variables).toEqual({});
  });

  it('ignores arguments the tool does not declare', () => {
    const runtime = new FlowRuntime(argumentsFlow());
    const outcome = runtime.applyToolCall('set_number', '{"value": 2, "admin": true, "__proto__": {"x": 1}}');
    expect(outcome.arguments).toEqual({ value: 2 });
    expect(runtime.variables).toEqual({ value: 2 });
  });

  it('checks the tool name before the arguments', () => {
    const runtime = new FlowRuntime(argumentsFlow());
    expect(rejection(runtime.applyToolCall('unknown', '{bad')).code).toBe('unlisted_tool');
  });
});
