// The simulator's argument form: which fields a tool has, and what the designer typed turned
// into the arguments of a `simulate_tool` message. Inputs are text (what <input> gives); values
// are converted to the declared type with the same rules the server applies to a model's
// arguments, so a form that passes here is accepted there (test/renderer/talk checks this
// against server/flow/tool-arguments.ts). A designer may also send a form with problems on
// purpose, to watch the flow reject the call.
import type { FlowDocument, ParameterType, ToolDefinition } from '../../../../server/flow/types.ts';

export interface FormField {
  name: string;
  type: ParameterType;
  required: boolean;
}

export interface ToolForm {
  /** Whether the server has a definition for the tool in this state's document. */
  known: boolean;
  description: string;
  fields: FormField[];
  /** Where the tool leads from the state: a state name, or null when it stays. */
  target: string | null;
}

export type FormReading =
  | { ok: true; arguments: Record<string, unknown> }
  | {
      ok: false;
      /** One message per field that is missing or cannot be read as its type. */
      problems: Record<string, string>;
      /** What sending anyway would send: readable values typed, the rest as typed text. */
      arguments: Record<string, unknown>;
    };

const own = <T>(record: Record<string, T> | undefined, key: string): T | undefined =>
  record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;

/**
 * The form of `tool` as the state `stateName` defines it. A tool the state does not define
 * (the designer trying one from another state, to see the rejection) takes its parameters from
 * the first state that does.
 */
export function toolForm(document: FlowDocument | null, stateName: string, tool: string): ToolForm {
  const state = document ? own(document.states, stateName) : undefined;
  let definition: ToolDefinition | undefined = own(state?.tools, tool);
  if (!definition && document) {
    for (const other of Object.values(document.states)) {
      definition = own(other.tools, tool);
      if (definition) break;
    }
  }
  const target = own(state?.transitions?.on_tool_call, tool);
  return {
    known: definition !== undefined,
    description: definition?.description ?? '',
    fields: Object.entries(definition?.parameters ?? {}).map(([name, parameter]) => ({ name, type: parameter.type, required: parameter.required === true })),
    target: target !== undefined && target !== stateName ? target : null,
  };
}

/** Tools defined somewhere in the flow but not listed by this state: trying one shows a rejection. */
export function otherTools(document: FlowDocument | null, listed: readonly string[]): string[] {
  if (!document) return [];
  const names = new Set<string>();
  for (const state of Object.values(document.states)) for (const name of Object.keys(state.tools ?? {})) names.add(name);
  return [...names].filter((name) => !listed.includes(name)).sort();
}

/** The first text of each field: the variable of the same name when the session has one. */
export function initialInputs(fields: readonly FormField[], variables: Readonly<Record<string, unknown>>): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const field of fields) {
    const value = own(variables as Record<string, unknown>, field.name);
    inputs[field.name] = value === undefined || value === null ? '' : String(value);
  }
  return inputs;
}

const DECIMAL_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Reads the form. An empty field is an argument not given (so a required one is missing);
 * whitespace-only counts as empty. Text is sent as typed, numbers as JSON numbers, booleans as
 * true/false.
 */
export function readToolForm(fields: readonly FormField[], inputs: Readonly<Record<string, string>>): FormReading {
  const values: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const text = own(inputs as Record<string, string>, field.name) ?? '';
    if (text.trim() === '') {
      if (field.required) problems[field.name] = 'Required';
      continue;
    }
    const read = readValue(field.type, text);
    if (read.ok) values[field.name] = read.value;
    else {
      problems[field.name] = read.problem;
      values[field.name] = text;
    }
  }
  return Object.keys(problems).length === 0 ? { ok: true, arguments: values } : { ok: false, problems, arguments: values };
}

function readValue(type: ParameterType, text: string): { ok: true; value: string | number | boolean } | { ok: false; problem: string } {
  switch (type) {
    case 'string':
      return { ok: true, value: text };
    case 'number': {
      const trimmed = text.trim();
      const number = DECIMAL_NUMBER.test(trimmed) ? Number(trimmed) : NaN;
      return Number.isFinite(number) ? { ok: true, value: number } : { ok: false, problem: 'Enter a number, like 3 or 2.5' };
    }
    case 'integer': {
      const trimmed = text.trim();
      const number = DECIMAL_NUMBER.test(trimmed) ? Number(trimmed) : NaN;
      return Number.isSafeInteger(number) ? { ok: true, value: number } : { ok: false, problem: 'Enter a whole number, like 3' };
    }
    case 'boolean':
      if (text === 'true') return { ok: true, value: true };
      if (text === 'false') return { ok: true, value: false };
      return { ok: false, problem: 'Choose true or false' };
  }
}

/**
 * Arguments typed as JSON, for a tool whose definition the studio does not have (the flow in the
 * editor does not parse): empty is no arguments; anything else must be a JSON object.
 */
export function readJsonArguments(text: string): { ok: true; arguments: Record<string, unknown> } | { ok: false; problem: string } {
  if (text.trim() === '') return { ok: true, arguments: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'Not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, problem: 'Arguments must be a JSON object, like {"name": "value"}' };
  return { ok: true, arguments: value as Record<string, unknown> };
}

/** Arguments as one line for the tool-call log: `name = value · other = 2`. */
export function formatArguments(value: unknown): string {
  if (value === null || value === undefined) return '';
  const show = (item: unknown) => (typeof item === 'string' ? item : JSON.stringify(item));
  if (typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value as Record<string, unknown>)
      .map(([name, item]) => `${name} = ${show(item)}`)
      .join(' · ');
  }
  return show(value);
}
