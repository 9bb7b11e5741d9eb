// The flow document's shape, written as data so that it reads like the spec's tables, and a
// checker that reports every deviation (missing keys, unknown keys, wrong types) at once.
import { PARAMETER_TYPES, type DiagnosticCode, type DocPath } from './types.ts';

type Shape =
  | { kind: 'string' }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly string[]; code: DiagnosticCode; what: string }
  | { kind: 'object'; fields: Record<string, Field> }
  | { kind: 'map'; value: Shape; key?: KeyRule }
  | { kind: 'list'; item: Shape };

interface Field {
  shape: Shape;
  required: boolean;
}

interface KeyRule {
  pattern: RegExp;
  code: DiagnosticCode;
  rule: string;
}

const string: Shape = { kind: 'string' };
const req = (shape: Shape): Field => ({ shape, required: true });
const opt = (shape: Shape): Field => ({ shape, required: false });

/** OpenAI's function-name rule: the model API refuses any other tool name. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Parameters become `{placeholder}` variables, so they must be identifiers. */
export const PARAMETER_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const parameter: Shape = {
  kind: 'object',
  fields: {
    type: req({ kind: 'enum', values: PARAMETER_TYPES, code: 'invalid_parameter_type', what: 'parameter type' }),
    required: opt({ kind: 'boolean' }),
  },
};

const tool: Shape = {
  kind: 'object',
  fields: {
    description: req(string),
    parameters: opt({
      kind: 'map',
      value: parameter,
      key: {
        pattern: PARAMETER_NAME_PATTERN,
        code: 'invalid_parameter_name',
        rule: 'a parameter name is a letter or _ followed by letters, digits or _ (it becomes a {placeholder} variable)',
      },
    }),
    speech_cue: opt(string),
  },
};

const state: Shape = {
  kind: 'object',
  fields: {
    ui: opt({ kind: 'object', fields: { artifact_type: opt(string), prompt: opt(string) } }),
    agent: req({ kind: 'object', fields: { prompt: req(string), tools: opt({ kind: 'list', item: string }) } }),
    tools: opt({
      kind: 'map',
      value: tool,
      key: {
        pattern: TOOL_NAME_PATTERN,
        code: 'invalid_tool_name',
        rule: 'a tool name is 1 to 64 letters, digits, _ or - (the rule of the model APIs)',
      },
    }),
    transitions: opt({ kind: 'object', fields: { on_tool_call: opt({ kind: 'map', value: string }) } }),
  },
};

export const FLOW_SHAPE: Shape = {
  kind: 'object',
  fields: {
    id: req(string),
    version: req(string),
    initial_state: req(string),
    settings: opt({ kind: 'object', fields: { base_system_prompt: opt(string) } }),
    states: req({ kind: 'map', value: state }),
  },
};

export interface StructureProblem {
  code: DiagnosticCode;
  message: string;
  path: Array<string | number>;
  /** Point at the key of the last path segment rather than at its value. */
  atKey: boolean;
}

export function describePath(path: DocPath): string {
  if (path.length === 0) return 'the document';
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return `the text "${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  return `the ${typeof value} ${String(value)}`;
}

const EXPECTED: Record<Shape['kind'], string> = {
  string: 'text',
  boolean: 'true or false',
  enum: 'one of the listed values',
  object: 'a map',
  map: 'a map',
  list: 'a list',
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of a scalar as written in the source, when the caller has the source. */
export type SourceText = (path: DocPath) => string | undefined;

/** Checks `value` against `shape`; every problem is reported, none stops the walk. */
export function checkStructure(value: unknown, sourceText: SourceText = () => undefined): StructureProblem[] {
  const problems: StructureProblem[] = [];
  walk(value, FLOW_SHAPE, [], problems, sourceText);
  return problems;
}

function wrongType(value: unknown, shape: Shape, path: Array<string | number>, sourceText: SourceText): StructureProblem {
  let hint = '';
  // YAML reads `version: 1.0` as the number 1; designers rarely mean that.
  if (shape.kind === 'string' && (typeof value === 'number' || typeof value === 'boolean')) {
    hint = ` (put it in quotes to make it text: "${sourceText(path) ?? String(value)}")`;
  }
  return {
    code: 'wrong_type',
    message: `${describePath(path)} must be ${EXPECTED[shape.kind]}, not ${describeValue(value)}${hint}`,
    path,
    atKey: false,
  };
}

function walk(value: unknown, shape: Shape, path: Array<string | number>, out: StructureProblem[], sourceText: SourceText): void {
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') out.push(wrongType(value, shape, path, sourceText));
      return;
    case 'boolean':
      if (typeof value !== 'boolean') out.push(wrongType(value, shape, path, sourceText));
      return;
    case 'enum':
      if (typeof value !== 'string' || !shape.values.includes(value)) {
        out.push({
          code: shape.code,
          message: `${describePath(path)}: ${describeValue(value)} is not a ${shape.what}; use one of ${shape.values.join(', ')}`,
          path,
          atKey: false,
        });
      }
      return;
    case 'list':
      if (!Array.isArray(value)) {
        out.push(wrongType(value, shape, path, sourceText));
        return;
      }
      value.forEach((item, index) => walk(item, shape.item, [...path, index], out, sourceText));
      return;
    case 'map':
      if (!isPlainObject(value)) {
        out.push(wrongType(value, shape, path, sourceText));
        return;
      }
      for (const [key, item] of Object.entries(value)) {
        if (shape.key && !shape.key.pattern.test(key)) {
          out.push({
            code: shape.key.code,
            message: `"${key}" in ${describePath(path)} is not a valid name: ${shape.key.rule}`,
            path: [...path, key],
            atKey: true,
          });
        }
        walk(item, shape.value, [...path, key], out, sourceText);
      }
      return;
    case 'object': {
      if (!isPlainObject(value)) {
        out.push(wrongType(value, shape, path, sourceText));
        return;
      }
      for (const [name, field] of Object.entries(shape.fields)) {
        if (value[name] === undefined) {
          if (field.required) {
            out.push({
              code: 'missing_key',
              message: `${describePath(path)} needs the key "${name}"`,
              path,
              atKey: true,
            });
          }
          continue;
        }
        walk(value[name], field.shape, [...path, name], out, sourceText);
      }
      const known = Object.keys(shape.fields);
      for (const key of Object.keys(value)) {
        if (!(key in shape.fields)) {
          const suggestion = closest(key, known);
          out.push({
            code: 'unknown_key',
            message:
              `${describePath(path)} has an unknown key "${key}"` +
              (suggestion ? `; did you mean "${suggestion}"?` : `; allowed keys: ${known.join(', ')}`),
            path: [...path, key],
            atKey: true,
          });
        }
      }
      return;
    }
  }
}

/** The allowed key within edit distance 2 of a typo, if any. */
function closest(word: string, candidates: string[]): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length]!;
}
