// What the model sends as a tool call's arguments, checked against the tool's declared
// parameters and converted to variables.
import type { ParameterType, ToolParameter } from './types.ts';
import type { VariableValue } from './template.ts';
import { ownValue, setOwn } from './own-keys.ts';

/** The runtime's argument type: the raw JSON text a model produced, or a decoded object. */
export type ToolArguments = string | Record<string, unknown> | null | undefined;

/** `given` is what the model sent, decoded when it was JSON text that parsed. */
export type ParsedArguments =
  | { ok: true; given: unknown; value: Record<string, unknown> }
  | { ok: false; given: unknown; problem: string };

export function parseArguments(args: ToolArguments): ParsedArguments {
  let given: unknown = args;
  if (typeof args === 'string') {
    if (args.trim() === '') return { ok: true, given: args, value: {} };
    try {
      given = JSON.parse(args);
    } catch {
      // JSON.parse messages differ between engines; the studio must replay the same text.
      return { ok: false, given: args, problem: 'are not valid JSON' };
    }
  }
  if (given === null || given === undefined) return { ok: true, given, value: {} };
  if (typeof given !== 'object' || Array.isArray(given)) {
    return { ok: false, given, problem: `must be a JSON object, not ${describeValue(given)}` };
  }
  return { ok: true, given, value: given as Record<string, unknown> };
}

interface ArgumentProblem {
  kind: 'missing' | 'mistyped';
  message: string;
}

export function checkArguments(
  parameters: Readonly<Record<string, ToolParameter>>,
  given: Record<string, unknown>,
): { values: Record<string, VariableValue>; problems: ArgumentProblem[] } {
  const values: Record<string, VariableValue> = {};
  const problems: ArgumentProblem[] = [];
  // Undeclared arguments are ignored on purpose: storing them would let the model set any variable.
  for (const [parameter, declared] of Object.entries(parameters)) {
    const value = ownValue(given, parameter);
    if (value === undefined || value === null) {
      if (declared.required === true) {
        problems.push({ kind: 'missing', message: `missing required argument '${parameter}' (${declared.type})` });
      }
      continue;
    }
    const coerced = coerceArgument(declared.type, value);
    if (coerced === undefined) {
      problems.push({
        kind: 'mistyped',
        message: `argument '${parameter}' must be ${withArticle(declared.type)}, got ${describeValue(value)}`,
      });
      continue;
    }
    // Compared after coercion, so "3" for an integer enum [1, 3] is the 3 it stands for.
    if (declared.enum !== undefined && !declared.enum.includes(coerced)) {
      problems.push({
        kind: 'mistyped',
        message: `argument '${parameter}' must be one of ${declared.enum.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(value)}`,
      });
      continue;
    }
    setOwn(values, parameter, coerced);
  }
  return { values, problems };
}

const DECIMAL_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Models often quote numbers or send numbers where text is asked for, so an argument is coerced
 * to the declared type when nothing is lost, and rejected otherwise:
 * - string: text as is; finite numbers and booleans as their text ("3", "true").
 * - number: finite numbers; decimal numeric strings ("3.5", "-2e3"), not "0x10", "Infinity" or "".
 * - integer: safe integers; numeric strings whose value is one ("3", "3.0"); never 3.5, and
 *   not integers beyond 2^53 where the value would already have been rounded.
 * - boolean: true/false and exactly the strings "true"/"false".
 * Objects, arrays and non-numeric strings are mistyped for every type.
 */
function coerceArgument(type: ParameterType, value: unknown): VariableValue | undefined {
  switch (type) {
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'boolean') return String(value);
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      return undefined;
    case 'number': {
      const number = toNumber(value);
      return number !== undefined && Number.isFinite(number) ? number : undefined;
    }
    case 'integer': {
      const number = toNumber(value);
      return number !== undefined && Number.isSafeInteger(number) ? number : undefined;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true') return true;
      if (value === 'false') return false;
      return undefined;
  }
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && DECIMAL_NUMBER.test(value.trim())) return Number(value.trim());
  return undefined;
}

function withArticle(type: ParameterType): string {
  return type === 'integer' ? 'an integer' : `a ${type}`;
}

const MAX_QUOTED_LENGTH = 40;

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string': {
      const quoted = JSON.stringify(value.length > MAX_QUOTED_LENGTH ? `${value.slice(0, MAX_QUOTED_LENGTH)}…` : value);
      return `the string ${quoted}`;
    }
    case 'number':
    case 'boolean':
      return `the ${typeof value} ${String(value)}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}
