// A Pipecat node's functions, in whichever dict form they were written (types.ts lists them),
// read into one shape, and turned into Voxflow tools with their parameters. What cannot be a
// Voxflow tool parameter is adapted (and said) rather than dropped, so no argument is lost.
import { PARAMETER_NAME_PATTERN, PARAMETER_TYPES, TOOL_NAME_PATTERN } from '../schema.ts';
import type { ToolDefinition, ToolParameter } from '../types.ts';
import type { PipecatDiagnosticCode } from './types.ts';

export type Path = Array<string | number>;
export type Report = (code: PipecatDiagnosticCode, message: string, path: Path, atKey?: boolean) => void;

/**
 * `target[key] = value` as an own property whatever the key: a node, function or parameter may
 * be called `__proto__`, which plain assignment would take as the object's prototype.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A function as every form says it: where its fields were, and what routes it. */
export interface ReadFunction {
  name: string;
  description: string;
  properties: Record<string, unknown>;
  required: unknown;
  /** `transition_to`, `next_node` or the editor's `next_node_id`. */
  target: string | null;
  path: Path;
  /** Where `properties` is, for diagnostics about one parameter. */
  propertiesPath: Path;
  fields: Record<string, unknown>;
}

/** The keys of a function that a Voxflow tool has, or that are handled one by one below. */
const FUNCTION_KEYS = new Set(['name', 'description', 'properties', 'required', 'parameters', 'input_schema', 'transition_to', 'next_node', 'next_node_id', 'handler', 'transition_callback', 'decision', 'type', 'function']);
const PROPERTY_KEYS = new Set(['type', 'description', 'enum']);

/** Every function of one `functions` list, flattened (a Gemini entry declares several). */
export function readFunctions(list: unknown, path: Path, report: Report): ReadFunction[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    report('pipecat_unmapped_key', '`functions` is not a list, so this node has no tools', path, true);
    return [];
  }
  const read: ReadFunction[] = [];
  list.forEach((entry, index) => {
    const at = [...path, index];
    if (!isObject(entry)) {
      report('pipecat_unmapped_key', 'a function that is not a map (a Python callable cannot be data): it is left out', at);
      return;
    }
    if (Array.isArray(entry.function_declarations)) {
      entry.function_declarations.forEach((declaration, inner) => {
        const declared = readOne(declaration, [...at, 'function_declarations', inner], 'parameters', report);
        if (declared) read.push(declared);
      });
      return;
    }
    if (isObject(entry.function)) {
      const openAi = readOne(entry.function, [...at, 'function'], 'parameters', report);
      if (openAi) read.push(openAi);
      return;
    }
    const one = readOne(entry, at, 'input_schema' in entry ? 'input_schema' : 'parameters' in entry ? 'parameters' : null, report);
    if (one) read.push(one);
  });
  return read;
}

function readOne(fields: unknown, path: Path, schemaKey: 'parameters' | 'input_schema' | null, report: Report): ReadFunction | null {
  if (!isObject(fields) || typeof fields.name !== 'string') {
    report('pipecat_unmapped_key', 'a function without a `name`: it is left out', path);
    return null;
  }
  const schema = schemaKey && isObject(fields[schemaKey]) ? (fields[schemaKey] as Record<string, unknown>) : fields;
  const schemaPath = schemaKey && isObject(fields[schemaKey]) ? [...path, schemaKey] : path;
  const target = [fields.transition_to, fields.next_node, fields.next_node_id].find((t) => typeof t === 'string' && t !== '') as string | undefined;
  for (const key of Object.keys(fields)) {
    if (!FUNCTION_KEYS.has(key)) report('pipecat_unmapped_key', `\`${key}\` of function "${fields.name}" has no Voxflow equivalent and is left out`, [...path, key], true);
  }
  return {
    name: fields.name,
    description: typeof fields.description === 'string' ? fields.description : '',
    properties: isObject(schema.properties) ? schema.properties : {},
    required: schema.required,
    target: target ?? null,
    path,
    propertiesPath: [...schemaPath, 'properties'],
    fields,
  };
}

/** `name` as a name `pattern` accepts: other characters become `_`. */
export function safeName(name: string, pattern: RegExp, fallback: string): string {
  if (pattern.test(name)) return name;
  let safe = name.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 64);
  if (!/^[A-Za-z_]/.test(safe)) safe = `_${safe}`.slice(0, 64);
  return pattern.test(safe) ? safe : fallback;
}

export function safeToolName(name: string): string {
  return safeName(name, TOOL_NAME_PATTERN, 'tool');
}

/**
 * The Voxflow tool for a read function: its description and parameters (the route is the
 * caller's). Descriptions go to the model as they are (never rendered), so braces stay single.
 */
export function toolOf(fn: ReadFunction, report: Report): ToolDefinition {
  const tool: ToolDefinition = { description: fn.description };
  const required = new Set<string>();
  if (Array.isArray(fn.required)) {
    fn.required.forEach((name, index) => {
      if (typeof name === 'string' && Object.hasOwn(fn.properties, name)) required.add(name);
      else report('pipecat_parameter_adapted', `\`required\` names "${String(name)}", which is not one of the function's properties: left out`, [...fn.propertiesPath.slice(0, -1), 'required', index]);
    });
  }
  const parameters: Record<string, ToolParameter> = {};
  for (const [name, schema] of Object.entries(fn.properties)) {
    const path = [...fn.propertiesPath, name];
    let parameterName = safeName(name, PARAMETER_NAME_PATTERN, 'value');
    while (parameterName !== name && Object.hasOwn(fn.properties, parameterName)) parameterName = `${parameterName}_`;
    if (parameterName !== name) {
      report('pipecat_renamed', `parameter "${name}" is "${parameterName}" in Voxflow (a parameter becomes a {placeholder}, so it must be an identifier); the model sends it under the new name`, path, true);
    }
    setOwn(parameters, parameterName, parameterOf(schema, required.has(name), path, report));
  }
  if (Object.keys(parameters).length > 0) tool.parameters = parameters;
  return tool;
}

function parameterOf(schema: unknown, required: boolean, path: Path, report: Report): ToolParameter {
  const fields = isObject(schema) ? schema : {};
  const declared = Array.isArray(fields.type) ? fields.type.filter((t) => t !== 'null') : [fields.type];
  const type = (PARAMETER_TYPES as readonly unknown[]).includes(declared[0]) && declared.length === 1 ? (declared[0] as ToolParameter['type']) : 'string';
  if (type !== declared[0] || declared.length !== 1) {
    const said = fields.type === undefined ? 'no type' : `type ${JSON.stringify(fields.type)}`;
    report('pipecat_parameter_adapted', `a parameter of ${said} is a string in Voxflow (its types are ${PARAMETER_TYPES.join(', ')}): the model sends it as text`, path);
  }
  const parameter: ToolParameter = { type };
  if (required) parameter.required = true;
  if (typeof fields.description === 'string') parameter.description = fields.description;
  if (Array.isArray(fields.enum)) {
    const fits = fields.enum.filter((value) => valueFits(value, type));
    if (fits.length > 0) parameter.enum = fits as Array<string | number | boolean>;
    if (fits.length !== fields.enum.length) report('pipecat_parameter_adapted', `${fields.enum.length - fits.length} of the enum's values are not of type ${type}: left out`, [...path, 'enum']);
  }
  for (const key of Object.keys(fields)) {
    if (!PROPERTY_KEYS.has(key)) report('pipecat_unmapped_key', `\`${key}\` has no Voxflow equivalent (a parameter has a type, description and enum): the model is not told it`, [...path, key], true);
  }
  return parameter;
}

function valueFits(value: unknown, type: ToolParameter['type']): boolean {
  if (type === 'string') return typeof value === 'string';
  if (type === 'boolean') return typeof value === 'boolean';
  if (type === 'integer') return Number.isSafeInteger(value);
  return typeof value === 'number' && Number.isFinite(value);
}
