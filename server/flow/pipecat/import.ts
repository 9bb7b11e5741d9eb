// A little over 400 lines, one idea: reading the Pipecat formats before 1.0, whose mapping table
// below is read as one piece (the declarative format has its own file).
//
// importPipecatFlow: a Pipecat Flows FlowConfig (JSON or YAML; or the Pipecat Flows editor's
// JSON) in, a Voxflow flow document that validates out, and a diagnostic, at its line and
// column in the Pipecat text, for each part that does not map. Pure: the studio runs it too.
// The format is told by the file's shape (format.ts): the YAML FlowConfig of Pipecat Flows 1.x
// is converted by import-declarative.ts; the rest of this file reads the formats before 1.0.
//
// How the concepts of the formats before 1.0 map (docs/flows.md, "Pipecat Flows"):
// - `initial_node` → `initial_state`; each node → a state of the same name.
// - `role_messages` / `role_message` → `settings.base_system_prompt` (the initial node's, else
//   the first node's that has one); a later node whose role text differs gets it at the top of
//   its prompt, since Voxflow has one base prompt for the whole flow.
// - `task_messages` → `agent.prompt`, the messages' texts joined by a blank line. Pipecat texts
//   are not templates, so braces are doubled: `{x}` stays the text `{x}`, never a placeholder.
// - `functions` → the state's tools (listed in `agent.tools`) with their parameters;
//   `transition_to` / `next_node` / `next_node_id` → `transitions.on_tool_call`.
// - `pre_actions`: `tts_say` → `on_enter.say`, `end_conversation` → `on_enter.end_session`.
// - `respond_immediately: false` → `respond: false`; `context_strategy` RESET → `context: reset`.
import { Document, LineCounter, isScalar, visit } from 'yaml';
import { DocumentLocator, type Position } from '../locate.ts';
import { parseFlow } from '../parse.ts';
import { parseYaml } from '../parse-yaml.ts';
import { MAX_DOCUMENT_BYTES, MAX_YAML_ALIASES, type Diagnostic, type DocPath, type FlowDocument, type FlowState, type OnEnter, type ToolDefinition } from '../types.ts';
import { isObject, readFunctions, safeToolName, setOwn, toolOf, type Path, type Report } from './read-functions.ts';
import { messagesText, readActions, strategyOf } from './read-node-parts.ts';
import { readCompanion, type Companion } from './companion.ts';
import { isPipecatFlowData, pipecatFormatOf } from './format.ts';
import { convertDeclarative, type DeclarativeResult } from './import-declarative.ts';
import type { PipecatDiagnosticCode, PipecatImport } from './types.ts';

/** A FlowConfig's JSON is wordier than the YAML it becomes: twice the document limit. */
export const MAX_PIPECAT_BYTES = 2 * MAX_DOCUMENT_BYTES;

export interface PipecatImportOptions {
  /** The document's `id`; else from the editor's `meta.name`, else `pipecat-flow`. */
  id?: string;
}

/** One node as both shapes give it: its name, its NodeConfig fields, and where they are. */
interface SourceNode {
  name: string;
  config: Record<string, unknown>;
  path: Path;
}

interface SourceFlow {
  initial: string | null;
  initialPath: Path;
  nodes: SourceNode[];
  globalFunctions: unknown;
  name: string | null;
  version: string | null;
}

const NODE_KEYS = new Set(['task_messages', 'role_messages', 'role_message', 'functions', 'pre_actions', 'post_actions', 'context_strategy', 'respond_immediately', 'name', 'label']);
const utf8 = new TextEncoder();

/**
 * Pipecat text is plain text, Voxflow's is a template: braces are doubled so they stay text,
 * except a `{name}` that names a parameter of the flow's functions, which stays a placeholder
 * (a flow exported from Voxflow comes back with its placeholders; Pipecat would have sent the
 * model the braces as written, hence the diagnostic). Returns the names kept.
 */
export function templateOf(text: string, parameters: ReadonlySet<string>): { template: string; kept: string[] } {
  const kept: string[] = [];
  const template = text.replace(/\{+[A-Za-z_][A-Za-z0-9_]*\}+|[{}]/g, (match) => {
    const name = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(match)?.[1];
    if (name !== undefined && parameters.has(name)) {
      kept.push(name);
      return match;
    }
    return match.replace(/[{}]/g, (brace) => brace + brace);
  });
  return { template, kept };
}

export { isPipecatFlowData };

/**
 * A file's content. JSON (what most FlowConfigs are) is read with JSON.parse: the yaml library
 * took 0.9 s for 270 KiB of JSON, JSON.parse 2 ms. The YAML parse that gives diagnostics their
 * lines then runs only when there is a diagnostic to place. Other text is read as YAML.
 */
type ReadText = { ok: true; data: unknown; locate: (path: DocPath, atKey: boolean) => Position } | { ok: false; message: string; at: Position };

function readText(text: string): ReadText {
  if (/^\s*[{[]/.test(text)) {
    try {
      const data: unknown = JSON.parse(text);
      let locator: DocumentLocator | null = null;
      return { ok: true, data, locate: (path, atKey) => (locator ??= locatorOf(text).locator).position(path, atKey) };
    } catch {
      // Not JSON after all (YAML flow style, or a mistake): the YAML parse says where.
    }
  }
  const { doc, locator } = locatorOf(text);
  if (doc.errors.length > 0) return { ok: false, message: `the file is neither JSON nor YAML: ${doc.errors[0]!.message}`, at: locator.offsetPosition(doc.errors[0]!.pos[0]) };
  try {
    return { ok: true, data: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }), locate: (path, atKey) => locator.position(path, atKey) };
  } catch {
    return { ok: false, message: `aliases in this file expand to more than ${MAX_YAML_ALIASES} copies`, at: { line: 1, column: 1 } };
  }
}

function locatorOf(text: string) {
  const lines = new LineCounter();
  const doc = parseYaml(text, { lineCounter: lines, prettyErrors: false });
  return { doc, locator: new DocumentLocator(doc, lines, text) };
}

/** Whether a file's text is a Pipecat FlowConfig (so an import converts it) rather than a Voxflow flow. */
export function looksLikePipecatFlow(text: string): boolean {
  if (typeof text !== 'string' || text.length > MAX_PIPECAT_BYTES) return false;
  const read = readText(text);
  return read.ok && isPipecatFlowData(read.data);
}

export function importPipecatFlow(text: string, options: PipecatImportOptions = {}): PipecatImport {
  const refuse = (message: string, line = 1, column = 1): PipecatImport => ({
    yaml: null,
    format: null,
    diagnostics: [{ severity: 'error', code: 'pipecat_not_a_flow_config', message, path: [], line, column }],
  });
  if (typeof text !== 'string') return refuse('a FlowConfig is JSON or YAML text');
  if (text.length > MAX_PIPECAT_BYTES / 4 && utf8.encode(text).length > MAX_PIPECAT_BYTES) {
    return refuse(`the file is larger than ${MAX_PIPECAT_BYTES / 1024} KiB`);
  }
  const read = readText(text);
  if (!read.ok) return refuse(read.message, read.at.line, read.at.column);
  const data = read.data;
  if (!isPipecatFlowData(data)) {
    return refuse(
      isObject(data) && 'states' in data
        ? 'this is a Voxflow flow (it has `states`), not a Pipecat FlowConfig'
        : 'a Pipecat FlowConfig is a map with `initial_node` and `nodes` (or the Pipecat Flows editor\'s JSON, with `meta` and a list of `nodes`)',
    );
  }

  const diagnostics: Diagnostic[] = [];
  const report: Report = (code, message, path, atKey = false) => {
    diagnostics.push({ severity: 'warning', code, message, path, ...read.locate(path as DocPath, atKey) });
  };
  const { format, mixedAt } = pipecatFormatOf(data as Record<string, unknown>);
  let yaml: string;
  if (format === 'declarative') {
    if (mixedAt !== null) {
      report('pipecat_format_guessed', 'this file has parts of both Pipecat FlowConfig formats, this one of the format before 1.0: it is read as the YAML FlowConfig of Pipecat Flows 1.x, which has no place for this part', mixedAt, true);
    }
    let companion: Companion | null = null;
    const companionRead = readCompanion(text);
    if (companionRead.ok) companion = companionRead.companion;
    else diagnostics.push({ severity: 'warning', code: 'pipecat_companion_invalid', message: `${companionRead.message}: the functions are read without it`, path: [], ...companionRead.at });
    const converted = convertDeclarative(data as Record<string, unknown>, companion, options.id ?? 'pipecat-flow', report, (code, message, at) => {
      diagnostics.push({ severity: 'warning', code, message, path: [], ...at });
    });
    if (converted.document === null) return refuse('the FlowConfig has no nodes');
    yaml = withoutBadCompanionTools(converted, companion!, diagnostics);
  } else {
    const source = readSource(data as Record<string, unknown>, report);
    if (source.nodes.length === 0) return refuse('the FlowConfig has no nodes');
    yaml = stringifyFlow(convert(source, options.id ?? idFromName(source.name), report));
  }
  // The conversion is meant to always give a valid flow; should it not, the user sees why.
  for (const problem of parseFlow(yaml).diagnostics) {
    if (problem.severity === 'error') diagnostics.push({ ...problem, message: `the converted flow: ${problem.message}`, line: 1, column: 1 });
  }
  const order = (d: Diagnostic) => (d.severity === 'error' ? 0 : 1);
  diagnostics.sort((a, b) => order(a) - order(b) || a.line - b.line || a.column - b.column);
  return { yaml, format, diagnostics };
}

/**
 * The converted flow's YAML, with any tool the `voxflow` comment defined that the validator
 * refuses (an http URL that is no URL, say) read as if the comment had not defined it, and said
 * at the comment's line: a hand-edited comment never stops the import.
 */
function withoutBadCompanionTools(converted: DeclarativeResult, companion: Companion, diagnostics: Diagnostic[]): string {
  const document = converted.document!;
  let pending = converted.fromCompanion;
  for (;;) {
    const yaml = stringifyFlow(document);
    if (pending.length === 0) return yaml;
    const errors = parseFlow(yaml).diagnostics.filter((d) => d.severity === 'error');
    const bad = pending.filter(({ documentPath }) => errors.some((error) => documentPath.every((segment, index) => error.path[index] === segment)));
    if (bad.length === 0) return yaml;
    for (const { documentPath, companionPath } of bad) {
      const error = errors.find((e) => documentPath.every((segment, index) => e.path[index] === segment))!;
      const holder = documentPath.slice(0, -1).reduce<Record<string, unknown>>((at, key) => at[key] as Record<string, unknown>, document as unknown as Record<string, unknown>);
      setOwn(holder, String(documentPath.at(-1)), { description: '' });
      diagnostics.push({
        severity: 'warning',
        code: 'pipecat_companion_invalid',
        message: `the \`voxflow\` comment's "${String(companionPath.at(-1))}": ${error.message}; the tool is read without its definition`,
        path: [],
        ...companion.locate(companionPath, true),
      });
    }
    pending = pending.filter((entry) => !bad.includes(entry));
  }
}

function readSource(data: Record<string, unknown>, report: Report): SourceFlow {
  if (Array.isArray(data.nodes)) {
    // The Pipecat Flows editor: nodes are a list; `edges` only draw what the functions route.
    for (const key of Object.keys(data)) {
      if (!['$schema', '$id', 'meta', 'nodes', 'edges', 'global_functions'].includes(key)) report('pipecat_unmapped_key', `\`${key}\` has no Voxflow equivalent and is left out`, [key], true);
    }
    const nodes: SourceNode[] = [];
    let initial: string | null = null;
    let initialPath: Path = ['nodes'];
    data.nodes.forEach((node, index) => {
      if (!isObject(node) || typeof node.id !== 'string') {
        report('pipecat_unmapped_key', 'a node without an `id`: it is left out', ['nodes', index]);
        return;
      }
      if (node.type === 'initial' && initial === null) {
        initial = node.id;
        initialPath = ['nodes', index, 'type'];
      }
      nodes.push({ name: node.id, config: isObject(node.data) ? node.data : {}, path: ['nodes', index, 'data'] });
    });
    const meta = data.meta as Record<string, unknown>;
    return {
      initial,
      initialPath,
      nodes,
      globalFunctions: data.global_functions,
      name: typeof meta.name === 'string' ? meta.name : null,
      version: typeof meta.version === 'string' ? meta.version : null,
    };
  }
  for (const key of Object.keys(data)) {
    if (key !== 'initial_node' && key !== 'nodes') report('pipecat_unmapped_key', `\`${key}\` has no Voxflow equivalent and is left out`, [key], true);
  }
  const nodes: SourceNode[] = [];
  for (const [name, config] of Object.entries(data.nodes as Record<string, unknown>)) {
    if (isObject(config)) nodes.push({ name, config, path: ['nodes', name] });
    else report('pipecat_unmapped_key', `node "${name}" is not a map: it is left out`, ['nodes', name]);
  }
  return {
    initial: typeof data.initial_node === 'string' ? data.initial_node : null,
    initialPath: ['initial_node'],
    nodes,
    globalFunctions: undefined,
    name: null,
    version: null,
  };
}

function convert(source: SourceFlow, id: string, report: Report): FlowDocument {
  const names = new Set(source.nodes.map((node) => node.name));
  let initial = source.initial;
  if (initial === null || !names.has(initial)) {
    const first = source.nodes[0]!.name;
    report('pipecat_unknown_initial_node', `${initial === null ? 'no initial node is named' : `the initial node "${initial}" is not one of the nodes`}: the flow starts at "${first}"`, source.initialPath);
    initial = first;
  }

  // Every parameter name of the flow, for the placeholders texts keep (templateOf).
  const parameters = new Set<string>();
  const silent: Report = () => {};
  for (const fn of [...readFunctions(source.globalFunctions, [], silent), ...source.nodes.flatMap((node) => readFunctions(node.config.functions, [], silent))]) {
    for (const name of Object.keys(fn.properties)) parameters.add(name);
  }
  const template: Template = (text, path) => {
    const { template: result, kept } = templateOf(text, parameters);
    if (kept.length > 0) {
      const names = [...new Set(kept)].map((n) => `{${n}}`).join(', ');
      report('pipecat_message_adapted', `${names} is filled in by Voxflow with what the tool call of that parameter stored (Pipecat would send the braces as written)`, path);
    }
    return result;
  };

  const roles = new Map(source.nodes.map((node) => [node.name, roleText(node, report)] as const));
  const base = roles.get(initial) ?? source.nodes.map((node) => roles.get(node.name)).find((text) => text !== undefined);

  const document: FlowDocument = { id, version: semverOr(source.version), initial_state: initial, states: {} };
  if (base !== undefined) {
    const initialNode = source.nodes.find((node) => node.name === initial && roles.get(node.name) !== undefined) ?? source.nodes.find((node) => roles.get(node.name) !== undefined)!;
    document.settings = { base_system_prompt: template(base, rolePath(initialNode)) };
  }

  const globals = readFunctions(source.globalFunctions, ['global_functions'], report);
  if (globals.length > 0) {
    document.tools = {};
    document.settings = { ...document.settings, global_tools: {} };
    for (const fn of globals) {
      const name = uniqueToolName(fn.name, document.tools, fn.path, report);
      setOwn(document.tools, name, toolOf(fn, report));
      setOwn(document.settings.global_tools!, name, {});
    }
  }

  for (const node of source.nodes) {
    const state = stateOf(node, names, template, report);
    const role = roles.get(node.name);
    if (role !== undefined && role !== base) {
      report('pipecat_message_adapted', `node "${node.name}" sets a role of its own; Voxflow has one base prompt for the flow, so the role text is put at the top of this state's prompt`, rolePath(node), true);
      state.agent.prompt = `${template(role, rolePath(node))}\n\n${state.agent.prompt}`.trimEnd();
    }
    setOwn(document.states, node.name, state);
  }
  // In the order a designer reads a flow: settings and shared tools before the states.
  const { states, settings, tools, ...head } = document;
  return { ...head, ...(settings ? { settings } : {}), ...(tools ? { tools } : {}), states };
}

type Template = (text: string, path: Path) => string;

const rolePath = (node: SourceNode): Path => [...node.path, node.config.role_message !== undefined ? 'role_message' : 'role_messages'];

function stateOf(node: SourceNode, names: ReadonlySet<string>, template: Template, report: Report): FlowState {
  const { config, path } = node;
  for (const key of Object.keys(config)) {
    if (!NODE_KEYS.has(key)) report('pipecat_unmapped_key', `\`${key}\` of node "${node.name}" has no Voxflow equivalent and is left out`, [...path, key], true);
  }
  const state: FlowState = { agent: { prompt: template(messagesText(config.task_messages, [...path, 'task_messages'], report), [...path, 'task_messages']) } };

  const onEnter: OnEnter = {};
  const say: string[] = [];
  readActions(config.pre_actions, [...path, 'pre_actions'], 'pre', say, onEnter, report);
  readActions(config.post_actions, [...path, 'post_actions'], 'post', say, onEnter, report);
  if (say.length > 0 || onEnter.end_session) state.on_enter = { ...(say.length > 0 ? { say: template(say.join(' '), [...path, 'pre_actions']) } : {}), ...onEnter };

  const tools: Record<string, ToolDefinition> = {};
  const onToolCall: Record<string, string> = {};
  for (const fn of readFunctions(config.functions, [...path, 'functions'], report)) {
    const name = uniqueToolName(fn.name, tools, fn.path, report);
    setOwn(tools, name, toolOf(fn, report));
    routeOf(fn, name, names, onToolCall, report);
  }
  if (Object.keys(tools).length > 0) {
    state.agent.tools = Object.keys(tools);
    state.tools = tools;
  }
  if (Object.keys(onToolCall).length > 0) state.transitions = { on_tool_call: onToolCall };

  if (config.respond_immediately === false) state.respond = false;
  else if (config.respond_immediately !== undefined && config.respond_immediately !== true) {
    report('pipecat_unmapped_key', '`respond_immediately` is not true or false: the state responds at once', [...path, 'respond_immediately']);
  }
  const strategy = strategyOf(config.context_strategy);
  if (strategy === 'RESET' || strategy === 'RESET_WITH_SUMMARY') state.context = 'reset';
  if (strategy === 'RESET_WITH_SUMMARY') {
    report('pipecat_context_summary', 'RESET_WITH_SUMMARY becomes `context: reset`: Voxflow resets the context without a summary of what was said', [...path, 'context_strategy']);
  } else if (config.context_strategy !== undefined && strategy !== 'RESET' && strategy !== 'APPEND') {
    report('pipecat_unmapped_key', 'an unknown context strategy (APPEND, RESET or RESET_WITH_SUMMARY): the context is kept', [...path, 'context_strategy']);
  }
  return state;
}

function routeOf(fn: ReturnType<typeof readFunctions>[number], tool: string, names: ReadonlySet<string>, onToolCall: Record<string, string>, report: Report): void {
  const { fields, target } = fn;
  if (target !== null) {
    if (names.has(target)) setOwn(onToolCall, tool, target);
    else report('pipecat_unknown_target', `function "${fn.name}" moves to "${target}", which is not a node: the call keeps the state`, fn.path);
  }
  if (fields.transition_callback !== undefined) {
    report('pipecat_runtime_transition', `function "${fn.name}" chooses its next node in a transition_callback (code, run by Pipecat): Voxflow routes a tool to one fixed state, so add the transition in the editor`, [...fn.path, 'transition_callback'], true);
  }
  if (isObject(fields.decision)) {
    const candidates = [
      ...(Array.isArray(fields.decision.conditions) ? fields.decision.conditions.map((c) => (isObject(c) ? c.next_node_id : undefined)) : []),
      fields.decision.default_next_node_id,
    ].filter((n): n is string => typeof n === 'string');
    report('pipecat_runtime_transition', `function "${fn.name}" chooses among ${[...new Set(candidates)].map((n) => `"${n}"`).join(', ')} by running Python code: Voxflow routes a tool to one fixed state, so the call keeps the state; add the transition you need in the editor`, [...fn.path, 'decision'], true);
  }
  if (fields.handler !== undefined) {
    report(
      'pipecat_handler_not_run',
      target !== null
        ? `function "${fn.name}" has a handler (Python code); Voxflow does not run it: the tool stores its arguments as variables and moves to "${target}"`
        : `function "${fn.name}" has a handler (Python code); Voxflow does not run it: the tool stores its arguments as variables and keeps the state (if the handler chose the next node, add that transition in the editor)`,
      [...fn.path, 'handler'],
      true,
    );
  }
}

function uniqueToolName(name: string, taken: Record<string, unknown>, path: Path, report: Report): string {
  const safe = safeToolName(name);
  let unique = safe;
  for (let n = 2; Object.hasOwn(taken, unique); n++) unique = `${safe.slice(0, 60)}_${n}`;
  if (unique !== name) {
    const why = safe !== name ? 'a tool name is 1 to 64 letters, digits, _ or -' : 'the node has two functions of that name';
    report('pipecat_renamed', `function "${name}" is the tool "${unique}" (${why})`, [...path, 'name']);
  }
  return unique;
}

/** A node's role: `role_message` (text) or the deprecated `role_messages` list. */
function roleText(node: SourceNode, report: Report): string | undefined {
  if (typeof node.config.role_message === 'string') return node.config.role_message;
  if (node.config.role_messages === undefined) return undefined;
  return messagesText(node.config.role_messages, [...node.path, 'role_messages'], report);
}

function semverOr(version: string | null): string {
  return version !== null && /^\d+\.\d+\.\d+/.test(version) ? version : '1.0.0';
}

function idFromName(name: string | null): string {
  const slug = (name ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || 'pipecat-flow';
}

/** The document as YAML a designer reads: multi-line prompts as block text, said where it came from. */
export function stringifyFlow(document: FlowDocument, comment = ' Imported from a Pipecat Flows FlowConfig (see docs/flows.md in Voxflow, "Pipecat Flows").'): string {
  const doc = new Document(document, { aliasDuplicateObjects: false });
  doc.commentBefore = comment;
  return toYamlText(doc);
}

/** A document's YAML with lists of names and values on one line, as the examples write them: `tools: [a, b]`. */
export function toYamlText(doc: Document): string {
  visit(doc, {
    Seq(_key, node) {
      if (node.items.every((item) => isScalar(item))) node.flow = true;
    },
  });
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

export type { PipecatDiagnosticCode };
