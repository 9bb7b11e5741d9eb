// Checks of one tool or one state on its own, for the extended keys: an http action's URL and
// headers, a parameter's enum, on-entry speech that cannot be interrupted, and a group's name. The checks that
// relate states and tools to each other are in semantics.ts, which calls these.
import type { SemanticProblem } from './semantics.ts';
import { GROUP_NAME_PATTERN } from './schema.ts';
import { secretReferences } from './secret-references.ts';

type Obj = Record<string, unknown>;

function asObject(value: unknown): Obj | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

/** Every tool definition of the document with its path: the top-level ones and each state's. */
export function toolsWithPaths(doc: Obj): Array<{ path: Array<string | number>; tool: Obj }> {
  const found: Array<{ path: Array<string | number>; tool: Obj }> = [];
  for (const [name, tool] of Object.entries(asObject(doc.tools) ?? {})) {
    const definition = asObject(tool);
    if (definition) found.push({ path: ['tools', name], tool: definition });
  }
  for (const [stateName, state] of Object.entries(asObject(doc.states) ?? {})) {
    for (const [name, tool] of Object.entries(asObject(asObject(state)?.tools) ?? {})) {
      const definition = asObject(tool);
      if (definition) found.push({ path: ['states', stateName, 'tools', name], tool: definition });
    }
  }
  return found;
}

/** Every variable something in the document can set: parameters, on_enter.set, http.store, dtmf.collect.into. */
export function settableByDocument(doc: Obj): Set<string> {
  const settable = new Set<string>();
  for (const { tool } of toolsWithPaths(doc)) {
    for (const name of Object.keys(asObject(tool.parameters) ?? {})) settable.add(name);
    for (const name of Object.keys(asObject(asObject(tool.http)?.store) ?? {})) settable.add(name);
  }
  for (const state of Object.values(asObject(doc.states) ?? {})) {
    for (const name of Object.keys(asObject(asObject(asObject(state)?.on_enter)?.set) ?? {})) settable.add(name);
    const into = asObject(asObject(asObject(state)?.dtmf)?.collect)?.into;
    if (typeof into === 'string') settable.add(into);
  }
  return settable;
}

/** Header names that carry a credential: their value should come from `{secret.NAME}`. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|key|token|secret|password/i;

export function checkLocalRules(doc: Obj, states: Obj, out: SemanticProblem[]): void {
  for (const { path, tool } of toolsWithPaths(doc)) {
    const http = asObject(tool.http);
    if (http) checkHttpAction(http, [...path, 'http'], out);
    for (const [name, parameter] of Object.entries(asObject(tool.parameters) ?? {})) {
      checkEnum(asObject(parameter), [...path, 'parameters', name], out);
    }
  }
  checkTurnWaits(asObject(asObject(doc.settings)?.turn), ['settings', 'turn'], out);
  for (const [stateName, raw] of Object.entries(states)) {
    const state = asObject(raw);
    checkTurnWaits(asObject(state?.turn), ['states', stateName, 'turn'], out);
    const group = state?.group;
    // Not text at all is the structure check's wrong_type.
    if (typeof group === 'string' && !GROUP_NAME_PATTERN.test(group)) {
      out.push({
        code: 'invalid_group_name',
        message: `state "${stateName}" has the group "${group}": a group name is 1 to 40 letters, digits, _ or -, starting with a letter (write it the same way in every state of the group)`,
        path: ['states', stateName, 'group'],
        atKey: false,
      });
    }
    if (state?.interruptible !== false) continue;
    const says = typeof asObject(state.on_enter)?.say === 'string';
    if (!says && state.respond === false) {
      out.push({
        code: 'interruptible_without_speech',
        message: `state "${stateName}" says nothing on entering (no on_enter.say, respond: false), so interruptible: false has nothing to protect`,
        path: ['states', stateName, 'interruptible'],
        atKey: true,
      });
    }
  }
}

/** A `turn` whose longest wait is shorter than its base one: the designer meant something else. */
function checkTurnWaits(turn: Obj | null, path: Array<string | number>, out: SemanticProblem[]): void {
  const base = turn?.endpointing_ms;
  const max = turn?.max_endpointing_ms;
  if (typeof base !== 'number' || typeof max !== 'number' || max >= base) return;
  out.push({
    code: 'turn_wait_below_base',
    message: `max_endpointing_ms (${max}) is below endpointing_ms (${base}): the longest wait after unfinished words cannot be shorter than the usual one (make them equal for a fixed wait)`,
    path: [...path, 'max_endpointing_ms'],
    atKey: false,
  });
}

function checkHttpAction(http: Obj, path: Array<string | number>, out: SemanticProblem[]): void {
  if (typeof http.url === 'string') {
    const problem = urlProblem(http.url);
    if (problem) out.push({ code: 'invalid_http_url', message: `${path.join('.')}.url ${problem}`, path: [...path, 'url'], atKey: false });
  }
  for (const [header, value] of Object.entries(asObject(http.headers) ?? {})) {
    if (typeof value !== 'string' || !CREDENTIAL_HEADER.test(header)) continue;
    if (secretReferences(value).length === 0 && value.trim() !== '') {
      out.push({
        code: 'credential_in_header',
        message: `the header "${header}" looks like a credential written into the flow: store it with /v1/secrets and write {secret.NAME} here instead`,
        path: [...path, 'headers', header],
        atKey: false,
      });
    }
  }
}

function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text}" is not a URL: write it in full, like https://example.com/check`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http:// or https:// URL, not ${url.protocol}`;
  if (url.username !== '' || url.password !== '') return 'must not hold a user name or password: send them in a header with {secret.NAME}';
  return null;
}

function checkEnum(parameter: Obj | null, path: Array<string | number>, out: SemanticProblem[]): void {
  const values = parameter?.enum;
  if (!Array.isArray(values)) return;
  if (values.length === 0) {
    out.push({ code: 'invalid_enum', message: `${path.join('.')}.enum is empty: the model could send nothing`, path: [...path, 'enum'], atKey: true });
    return;
  }
  const type = parameter?.type;
  values.forEach((value, index) => {
    if (ofType(type, value)) return;
    out.push({
      code: 'invalid_enum',
      message: `${path.join('.')}.enum[${index}] is ${JSON.stringify(value)}, which is not a ${String(type)}`,
      path: [...path, 'enum', index],
      atKey: false,
    });
  });
}

function ofType(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true; // an unknown type is reported by the structure check
  }
}
