// Checks a document against the flow schema (schema.ts) and reports every deviation at once:
// missing keys, unknown keys (with a "did you mean"), wrong types, and names and values that break
// a rule the schema registered a diagnostic for. It reads the zod schema's definition once, when
// this module loads, rather than calling zod's parse on each document: a designer needs every
// problem in a designer's words with a place to point at, zod stops checking a map entry whose
// key is invalid, and the studio runs this on every keystroke of documents up to 256 KiB.
import type { z } from 'zod';
import { FlowDocument, enumRules, keyRules, rangeRules } from './schema.ts';
import type { DiagnosticCode } from './diagnostic-codes.ts';
import type { DocPath } from './types.ts';

// The studio's editors check names as they are typed, by the same rules.
export { GROUP_NAME_PATTERN, PARAMETER_NAME_PATTERN, TOOL_NAME_PATTERN } from './schema.ts';

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

/**
 * The schema as the walk needs it. Reading zod's definitions on every node would cost the walk
 * about twice its time on a large flow, so they are read once into this.
 */
type Expected =
  | { kind: 'string' }
  | { kind: 'boolean' }
  | { kind: 'number'; min: number; max: number; integer: boolean; unit: string }
  | { kind: 'scalar' }
  | { kind: 'enum'; values: ReadonlySet<string>; listed: string; code: DiagnosticCode; what: string }
  | { kind: 'object'; fields: Record<string, { expected: Expected; required: boolean }>; known: string[] }
  | { kind: 'record'; value: Expected; key: ReturnType<typeof keyRules.get> }
  | { kind: 'array'; item: Expected };

/** Fails when this module loads if the schema uses something the walk would not check. */
function readSchema(schema: z.core.$ZodType, at: string): Expected {
  const cannot = (what: string) =>
    new Error(`structure.ts cannot check ${what} at ${at}: teach readSchema() and walk() the diagnostic a designer should see`);
  const def = (schema as z.core.$ZodTypes)._zod.def;
  switch (def.type) {
    case 'string':
      if (def.checks?.length) throw cannot('a text with checks');
      return { kind: 'string' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'number': {
      const range = rangeRules.get(schema);
      if (!range) throw cannot('a number without a rangeRules entry (make it with boundedNumber)');
      return { kind: 'number', ...range };
    }
    case 'union': {
      // Only text-or-number-or-boolean, what a variable can hold.
      const kinds = def.options.map((option) => (option as z.core.$ZodTypes)._zod.def);
      if (!kinds.every((d) => ['string', 'number', 'boolean'].includes(d.type) && !('checks' in d && d.checks?.length))) {
        throw cannot('a union other than text, number or true/false');
      }
      return { kind: 'scalar' };
    }
    case 'enum': {
      const rule = enumRules.get(schema);
      if (!rule) throw cannot('an enum without an enumRules entry');
      const values = Object.values(def.entries).map(String);
      return { kind: 'enum', values: new Set(values), listed: values.join(', '), ...rule };
    }
    case 'array':
      return { kind: 'array', item: readSchema(def.element, `${at}[]`) };
    case 'record': {
      const key = keyRules.get(def.keyType);
      if (!key && def.keyType._zod.def.checks?.length) throw cannot('map keys with checks but no keyRules entry');
      return { kind: 'record', value: readSchema(def.valueType, `${at}.*`), key };
    }
    case 'object': {
      if (def.catchall?._zod.def.type !== 'never') throw cannot('a map that allows unknown keys (use z.strictObject)');
      const fields: Record<string, { expected: Expected; required: boolean }> = {};
      for (const [name, field] of Object.entries(def.shape)) {
        const fieldDef = (field as z.core.$ZodTypes)._zod.def;
        const inner = fieldDef.type === 'optional' ? fieldDef.innerType : field;
        fields[name] = { expected: readSchema(inner, `${at}.${name}`), required: fieldDef.type !== 'optional' };
      }
      return { kind: 'object', fields, known: Object.keys(fields) };
    }
    default:
      throw cannot(`a zod ${def.type}`);
  }
}

const FLOW_DOCUMENT = readSchema(FlowDocument, 'the document');

/** What a value of each kind is called in a "must be …" message. */
const EXPECTED: Record<Expected['kind'], string> = {
  string: 'text',
  boolean: 'true or false',
  number: 'a number',
  scalar: 'text, a number or true/false',
  enum: 'one of the listed values',
  object: 'a map',
  record: 'a map',
  array: 'a list',
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of a scalar as written in the source, when the caller has the source. */
export type SourceText = (path: DocPath) => string | undefined;

/** Checks `value` against the flow schema; every problem is reported, none stops the walk. */
export function checkStructure(value: unknown, sourceText: SourceText = () => undefined): StructureProblem[] {
  const problems: StructureProblem[] = [];
  walk(value, FLOW_DOCUMENT, [], problems, sourceText);
  return problems;
}

function wrongType(value: unknown, expected: Expected, path: Array<string | number>, sourceText: SourceText): StructureProblem {
  // YAML reads `version: 1.0` as the number 1; designers rarely mean that, and "not the number 1"
  // would puzzle someone who wrote 1.0: name what they wrote and how to make it text.
  const written = sourceText(path) ?? String(value);
  const unquoted = expected.kind === 'string' && (typeof value === 'number' || typeof value === 'boolean');
  return {
    code: 'wrong_type',
    message: unquoted
      ? `${describePath(path)} must be ${EXPECTED[expected.kind]}: write "${written}" in quotes (without them YAML reads ${written} as a ${typeof value})`
      : `${describePath(path)} must be ${EXPECTED[expected.kind]}, not ${describeValue(value)}`,
    path,
    atKey: false,
  };
}

function walk(value: unknown, expected: Expected, path: Array<string | number>, out: StructureProblem[], sourceText: SourceText): void {
  switch (expected.kind) {
    case 'string':
      if (typeof value !== 'string') out.push(wrongType(value, expected, path, sourceText));
      return;
    case 'boolean':
      if (typeof value !== 'boolean') out.push(wrongType(value, expected, path, sourceText));
      return;
    case 'scalar':
      // As zod's z.number(): YAML's .inf and .nan are not numbers a flow can use.
      if (!(typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) {
        out.push(wrongType(value, expected, path, sourceText));
      }
      return;
    case 'number':
      if (typeof value !== 'number' || Number.isNaN(value)) {
        out.push(wrongType(value, expected, path, sourceText));
      } else if (expected.integer && Number.isFinite(value) && !Number.isSafeInteger(value) && value >= expected.min && value <= expected.max) {
        out.push({ code: 'wrong_type', message: `${describePath(path)} must be a whole number, not ${value}`, path, atKey: false });
      } else if (!(value >= expected.min && value <= expected.max)) {
        const unit = expected.unit ? ` ${expected.unit}` : '';
        out.push({
          code: 'out_of_range',
          message: `${describePath(path)} is ${value}; it must be from ${expected.min} to ${expected.max}${unit}`,
          path,
          atKey: false,
        });
      }
      return;
    case 'enum':
      if (typeof value !== 'string' || !expected.values.has(value)) {
        out.push({
          code: expected.code,
          message: `${describePath(path)}: ${describeValue(value)} is not a ${expected.what}; use one of ${expected.listed}`,
          path,
          atKey: false,
        });
      }
      return;
    case 'array':
      if (!Array.isArray(value)) {
        out.push(wrongType(value, expected, path, sourceText));
        return;
      }
      value.forEach((item, index) => walk(item, expected.item, [...path, index], out, sourceText));
      return;
    case 'record':
      if (!isPlainObject(value)) {
        out.push(wrongType(value, expected, path, sourceText));
        return;
      }
      for (const [key, item] of Object.entries(value)) {
        if (expected.key && !expected.key.pattern.test(key)) {
          out.push({
            code: expected.key.code,
            message: `"${key}" in ${describePath(path)} is not a valid name: ${expected.key.rule}`,
            path: [...path, key],
            atKey: true,
          });
        }
        walk(item, expected.value, [...path, key], out, sourceText);
      }
      return;
    case 'object': {
      if (!isPlainObject(value)) {
        out.push(wrongType(value, expected, path, sourceText));
        return;
      }
      for (const [name, field] of Object.entries(expected.fields)) {
        if (!Object.hasOwn(value, name) || value[name] === undefined) {
          if (field.required) {
            out.push({ code: 'missing_key', message: `${describePath(path)} needs the key "${name}"`, path, atKey: true });
          }
          continue;
        }
        walk(value[name], field.expected, [...path, name], out, sourceText);
      }
      for (const key of Object.keys(value)) {
        // Own keys only: `in` would also find Object.prototype's names, and a key such as
        // `constructor`, `toString` or `__proto__` would pass unreported (zod refuses them).
        if (!Object.hasOwn(expected.fields, key)) {
          const suggestion = closest(key, expected.known);
          out.push({
            code: 'unknown_key',
            message:
              `${describePath(path)} has an unknown key "${key}"` +
              (suggestion ? `; did you mean "${suggestion}"?` : `; allowed keys: ${expected.known.join(', ')}`),
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
