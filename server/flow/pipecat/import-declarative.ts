// The declarative YAML FlowConfig of Pipecat Flows 1.x (`pipecat.flows`, JSON Schema in
// test/flow/pipecat/flow_config.schema.json) as a Voxflow flow document. How it maps is in
// docs/flows.md, "Pipecat Flows":
// - nodes → states; `task_messages` → `agent.prompt`; the initial node's `role_message` →
//   `settings.base_system_prompt` (a later node's own role goes at the top of its prompt).
// - `functions: [{name, transition_to}]` → the state's tools. A function is named only (Pipecat
//   takes its description and parameters from the Python function bound at run time), so its
//   definition is the file's `voxflow:` comment's (companion.ts) when there is one, else a tool
//   with no parameters and an empty description, said once per function.
// - `transition_to: node` → `on_tool_call`; a Branch `{field, cases, default}` → the cases'
//   nodes in `on_tool_result` (a result chooses among them by naming one in `next_state`), and
//   `default` in `on_tool_call` (what Voxflow does when the result names none).
// - `global_functions` → `settings.global_tools` (a target when `transition_to` is a node); one
//   with a Branch is listed in every state, since a global tool moves to one fixed target.
// - `{{ name }}` (a variable Pipecat fills when the flow is bound) → `{name}` (a session's
//   `context` fills it in Voxflow).
import type { Position } from '../locate.ts';
import type { FlowDocument, FlowState, GlobalTool, OnEnter, ToolDefinition } from '../types.ts';
import type { Companion } from './companion.ts';
import { isObject, safeToolName, setOwn, type Path, type Report } from './read-functions.ts';
import { messagesText, readActions } from './read-node-parts.ts';
import type { PipecatDiagnosticCode } from './types.ts';

export type ReportAt = (code: PipecatDiagnosticCode, message: string, at: Position) => void;

const TOP_KEYS = new Set(['initial_node', 'nodes', 'global_functions']);
const NODE_KEYS = new Set(['task_messages', 'role_message', 'functions', 'pre_actions', 'post_actions', 'context_strategy', 'respond_immediately']);
const TOOL_KEYS = new Set(['description', 'parameters', 'speech_cue', 'http', 'send_dtmf']);
const IDENTIFIER = '[A-Za-z_][A-Za-z0-9_]*';

interface Branch {
  field: string;
  cases: Array<{ value: string; node: string }>;
  default: string | null;
}

/** A function as a node or `global_functions` lists it. */
interface FunctionRef {
  name: string;
  transition: string | Branch | null;
  path: Path;
}

interface Node {
  name: string;
  config: Record<string, unknown>;
  path: Path;
  functions: FunctionRef[];
}

/** Where a tool's definition came from: the companion (and where in it), or nowhere. */
interface Definition {
  tool: ToolDefinition;
  from: Path | null;
}

export interface DeclarativeResult {
  document: FlowDocument | null;
  /** Where each tool definition taken from the companion is in the flow document, and in the companion. */
  fromCompanion: Array<{ documentPath: Path; companionPath: Path }>;
}

/**
 * Pipecat's text as a Voxflow template: `{{ name }}` is the variable `{name}`; other braces are
 * text (doubled), except a `{name}` naming a variable the flow's tools set, which a flow exported
 * from Voxflow wrote as it was and comes back as the placeholder. Returns the names kept so.
 */
export function declarativeTemplateOf(text: string, setByTools: ReadonlySet<string>): { template: string; kept: string[] } {
  const kept: string[] = [];
  const pattern = new RegExp(`\\{\\{\\s*(${IDENTIFIER})\\s*\\}\\}|\\{+${IDENTIFIER}\\}+|[{}]`, 'g');
  const template = text.replace(pattern, (match, variable: string | undefined) => {
    if (variable !== undefined) return `{${variable}}`;
    const name = new RegExp(`^\\{(${IDENTIFIER})\\}$`).exec(match)?.[1];
    if (name !== undefined && setByTools.has(name)) {
      kept.push(name);
      return match;
    }
    return match.replace(/[{}]/g, (brace) => brace + brace);
  });
  return { template, kept };
}

export function convertDeclarative(data: Record<string, unknown>, companion: Companion | null, id: string, report: Report, reportAt: ReportAt): DeclarativeResult {
  for (const key of Object.keys(data)) {
    if (!TOP_KEYS.has(key)) report('pipecat_unmapped_key', `\`${key}\` is not a FlowConfig key (initial_node, nodes, global_functions) and is left out`, [key], true);
  }
  const nodes: Node[] = [];
  for (const [name, config] of Object.entries(data.nodes as Record<string, unknown>)) {
    const path: Path = ['nodes', name];
    if (!isObject(config)) {
      report('pipecat_invalid_value', `node "${name}" is not a map of task_messages, functions…: it is left out`, path);
      continue;
    }
    nodes.push({ name, config, path, functions: readRefs(config.functions, [...path, 'functions'], `node "${name}"`, report) });
  }
  if (nodes.length === 0) return { document: null, fromCompanion: [] };
  const names = new Set(nodes.map((node) => node.name));

  let initial = typeof data.initial_node === 'string' ? data.initial_node : null;
  if (initial === null || !names.has(initial)) {
    const first = nodes[0]!.name;
    report('pipecat_unknown_initial_node', `${initial === null ? 'no initial node is named' : `the initial node "${initial}" is not one of the nodes`}: the flow starts at "${first}"`, ['initial_node']);
    initial = first;
  }
  const globals = readRefs(data.global_functions, ['global_functions'], '`global_functions`', report);
  const globalNames = new Set(globals.map((fn) => fn.name));

  // Pipecat resolves a function by its name, flow-wide: one Voxflow tool name per function name.
  const toolNames = new Map<string, string>();
  const taken = new Set<string>();
  for (const fn of [...globals, ...nodes.flatMap((node) => node.functions)]) {
    if (toolNames.has(fn.name)) continue;
    const safe = safeToolName(fn.name);
    let unique = safe;
    for (let n = 2; taken.has(unique); n++) unique = `${safe.slice(0, 60)}_${n}`;
    taken.add(unique);
    toolNames.set(fn.name, unique);
    if (unique !== fn.name) {
      const why = safe !== fn.name ? 'a tool name is 1 to 64 letters, digits, _ or -' : 'another function has that name once made a valid tool name';
      report('pipecat_renamed', `function "${fn.name}" is the tool "${unique}" (${why})`, [...fn.path, 'name']);
    }
  }

  // Definitions: the companion's, checked, else a tool without parameters (said once per function).
  const unschemed = new Set<string>();
  const definitionOf = (fn: FunctionRef, node: string | null): Definition => {
    const own = node !== null && companion !== null && Object.hasOwn(companion.nodeFunctions, node) && Object.hasOwn(companion.nodeFunctions[node]!, fn.name);
    const from: Path | null = own ? ['node_functions', node!, fn.name] : companion !== null && Object.hasOwn(companion.functions, fn.name) ? ['functions', fn.name] : null;
    const value = from === null ? undefined : own ? companion!.nodeFunctions[node!]![fn.name] : companion!.functions[fn.name];
    const tool = from === null ? null : companionTool(value, from, companion!, reportAt);
    if (tool !== null) return { tool, from };
    if (!unschemed.has(fn.name)) {
      unschemed.add(fn.name);
      report(
        'pipecat_function_without_schema',
        `function "${fn.name}" is named only (Pipecat takes its description and parameters from the Python function): the tool has no description or parameters; add them in the editor`,
        [...fn.path, 'name'],
      );
    }
    return { tool: { description: '' }, from: null };
  };

  // Every variable the tools set, for the placeholders a text keeps (declarativeTemplateOf).
  const setByTools = new Set<string>();
  if (companion !== null) {
    for (const value of [...Object.values(companion.functions), ...Object.values(companion.nodeFunctions).flatMap((map) => Object.values(map))]) {
      if (!isObject(value)) continue;
      if (isObject(value.parameters)) for (const name of Object.keys(value.parameters)) setByTools.add(name);
      if (isObject(value.http) && isObject(value.http.store)) for (const name of Object.keys(value.http.store)) setByTools.add(name);
    }
  }
  const template = (text: string, path: Path): string => {
    const { template: result, kept } = declarativeTemplateOf(text, setByTools);
    if (kept.length > 0) {
      const listed = [...new Set(kept)].map((n) => `{${n}}`).join(', ');
      report('pipecat_message_adapted', `${listed} is filled in by Voxflow with what the tool call that sets it stored (Pipecat would send the braces as written)`, path);
    }
    return result;
  };

  const document: FlowDocument = { id, version: '1.0.0', initial_state: initial, states: {} };
  const tools: Record<string, ToolDefinition> = {};
  const fromCompanion: DeclarativeResult['fromCompanion'] = [];
  const define = (target: Record<string, ToolDefinition>, documentPath: Path, tool: string, definition: Definition) => {
    if (Object.hasOwn(target, tool)) return;
    setOwn(target, tool, definition.tool);
    if (definition.from !== null) fromCompanion.push({ documentPath: [...documentPath, tool], companionPath: definition.from });
  };

  // Roles: the initial node's is the flow's base prompt; a later node's own goes atop its prompt.
  const roles = new Map<string, string>();
  for (const node of nodes) {
    const role = node.config.role_message;
    if (typeof role === 'string') roles.set(node.name, role);
    else if (role !== undefined && role !== null) report('pipecat_invalid_value', '`role_message` is not text: left out', [...node.path, 'role_message']);
  }
  const baseNode = roles.has(initial) ? initial : nodes.find((node) => roles.has(node.name))?.name;
  const base = baseNode === undefined ? undefined : roles.get(baseNode)!;
  if (base !== undefined) document.settings = { base_system_prompt: template(base, ['nodes', baseNode!, 'role_message']) };

  // Global functions: a fixed target is a global tool's; a Branch is listed in every state.
  const everywhere: FunctionRef[] = [];
  const globalTools: Record<string, GlobalTool> = {};
  for (const fn of globals) {
    const tool = toolNames.get(fn.name)!;
    define(tools, ['tools'], tool, definitionOf(fn, null));
    if (isObject(fn.transition)) {
      everywhere.push(fn);
      routeOf(fn, tool, tools[tool]!, names, { onToolCall: {}, onToolResult: {} }, report);
      report('pipecat_global_function_copied', `global function "${fn.name}" chooses its node by a branch: Voxflow's global tools move to one fixed state, so each state lists it with the branch`, [...fn.path, 'transition_to'], true);
      continue;
    }
    const entry: GlobalTool = {};
    if (typeof fn.transition === 'string') {
      if (names.has(fn.transition)) entry.target = fn.transition;
      else report('pipecat_unknown_target', `function "${fn.name}" moves to "${fn.transition}", which is not a node: the call keeps the state`, [...fn.path, 'transition_to']);
    }
    setOwn(globalTools, tool, entry);
  }
  if (Object.keys(globalTools).length > 0) document.settings = { ...document.settings, global_tools: globalTools };

  // A function several nodes share (or a global one) is one top-level tool; else the state's own.
  const sharedBy = new Map<string, number>();
  for (const node of nodes) {
    for (const fn of node.functions) {
      const own = companion !== null && Object.hasOwn(companion.nodeFunctions, node.name) && Object.hasOwn(companion.nodeFunctions[node.name]!, fn.name);
      if (!own) sharedBy.set(fn.name, (sharedBy.get(fn.name) ?? 0) + 1);
    }
  }

  for (const node of nodes) {
    const { config, path } = node;
    for (const key of Object.keys(config)) {
      if (!NODE_KEYS.has(key)) report('pipecat_unmapped_key', `\`${key}\` of node "${node.name}" is not a node key of the FlowConfig and is left out`, [...path, key], true);
    }
    if (config.task_messages === undefined) report('pipecat_invalid_value', `node "${node.name}" has no task_messages: the state's prompt is empty`, path, true);
    const state: FlowState = { agent: { prompt: template(messagesText(config.task_messages, [...path, 'task_messages'], report), [...path, 'task_messages']) } };
    const role = roles.get(node.name);
    if (role !== undefined && role !== base) {
      report('pipecat_message_adapted', `node "${node.name}" sets a role of its own; Voxflow has one base prompt for the flow, so the role text is put at the top of this state's prompt`, [...path, 'role_message'], true);
      state.agent.prompt = `${template(role, [...path, 'role_message'])}\n\n${state.agent.prompt}`.trimEnd();
    }

    const onEnter: OnEnter = {};
    const say: string[] = [];
    readActions(config.pre_actions, [...path, 'pre_actions'], 'pre', say, onEnter, report);
    readActions(config.post_actions, [...path, 'post_actions'], 'post', say, onEnter, report);
    if (say.length > 0 || onEnter.end_session) state.on_enter = { ...(say.length > 0 ? { say: template(say.join(' '), [...path, 'pre_actions']) } : {}), ...onEnter };

    const listed: string[] = [];
    const stateTools: Record<string, ToolDefinition> = {};
    const onToolCall: Record<string, string> = {};
    const onToolResult: Record<string, string[]> = {};
    const routes = { onToolCall, onToolResult };
    for (const fn of node.functions) {
      const tool = toolNames.get(fn.name)!;
      if (globalNames.has(fn.name)) {
        report('pipecat_invalid_value', `function "${fn.name}" is also a global function (Pipecat refuses that): in this state the node's own transition is used`, [...fn.path, 'name']);
      }
      listed.push(tool);
      const definition = definitionOf(fn, node.name);
      const shared = globalNames.has(fn.name) || (sharedBy.get(fn.name) ?? 0) > 1;
      if (definition.from?.[0] === 'node_functions' || !shared) define(stateTools, ['states', node.name, 'tools'], tool, definition);
      else define(tools, ['tools'], tool, definition);
      routeOf(fn, tool, definition.tool, names, routes, report);
    }
    for (const fn of everywhere) {
      const tool = toolNames.get(fn.name)!;
      if (listed.includes(tool)) continue;
      listed.push(tool);
      routeOf(fn, tool, tools[tool]!, names, routes, () => {});
    }
    if (listed.length > 0) state.agent.tools = listed;
    if (Object.keys(stateTools).length > 0) state.tools = stateTools;
    if (Object.keys(onToolCall).length > 0 || Object.keys(onToolResult).length > 0) {
      state.transitions = { ...(Object.keys(onToolCall).length > 0 ? { on_tool_call: onToolCall } : {}), ...(Object.keys(onToolResult).length > 0 ? { on_tool_result: onToolResult } : {}) };
    }

    if (config.respond_immediately === false) state.respond = false;
    else if (config.respond_immediately !== undefined && config.respond_immediately !== true) {
      report('pipecat_invalid_value', '`respond_immediately` is not true or false: the state responds at once', [...path, 'respond_immediately']);
    }
    if (config.context_strategy === 'reset') state.context = 'reset';
    else if (config.context_strategy !== undefined && config.context_strategy !== null && config.context_strategy !== 'append') {
      report('pipecat_invalid_value', '`context_strategy` is not append or reset: the context is kept', [...path, 'context_strategy']);
    }
    setOwn(document.states, node.name, state);
  }
  if (Object.keys(tools).length > 0) document.tools = tools;
  // In the order a designer reads a flow: settings and shared tools before the states.
  const { states, settings, tools: shared, ...head } = document;
  return { document: { ...head, ...(settings ? { settings } : {}), ...(shared ? { tools: shared } : {}), states }, fromCompanion };
}

function readRefs(list: unknown, path: Path, where: string, report: Report): FunctionRef[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    report('pipecat_invalid_value', `the functions of ${where} are not a list: left out`, path);
    return [];
  }
  const refs: FunctionRef[] = [];
  list.forEach((entry, index) => {
    const at: Path = [...path, index];
    if (!isObject(entry) || typeof entry.name !== 'string' || entry.name === '') {
      report('pipecat_invalid_value', 'a function is a map with a `name` (and `transition_to`): this one is left out', at);
      return;
    }
    for (const key of Object.keys(entry)) {
      if (key !== 'name' && key !== 'transition_to') report('pipecat_unmapped_key', `\`${key}\` of function "${entry.name}" is not a key of a FlowConfig function (name, transition_to) and is left out`, [...at, key], true);
    }
    if (refs.some((ref) => ref.name === entry.name)) {
      report('pipecat_invalid_value', `function "${entry.name}" is listed twice in ${where} (Pipecat refuses that): the second is left out`, [...at, 'name']);
      return;
    }
    refs.push({ name: entry.name, transition: transitionOf(entry.transition_to, [...at, 'transition_to'], entry.name, report), path: at });
  });
  return refs;
}

function transitionOf(value: unknown, path: Path, fn: string, report: Report): string | Branch | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (!isObject(value)) {
    report('pipecat_invalid_value', `the transition_to of "${fn}" is neither a node name nor a branch {field, cases, default}: the call keeps the state`, path);
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key !== 'field' && key !== 'cases' && key !== 'default') report('pipecat_unmapped_key', `\`${key}\` is not a key of a branch (field, cases, default) and is left out`, [...path, key], true);
  }
  if (typeof value.field !== 'string') report('pipecat_invalid_value', `the branch of "${fn}" has no \`field\` naming a field of the tool's result`, path, true);
  const cases: Branch['cases'] = [];
  if (isObject(value.cases)) {
    for (const [result, node] of Object.entries(value.cases)) {
      if (typeof node === 'string') cases.push({ value: result, node });
      else report('pipecat_invalid_value', `the case "${result}" does not name a node: left out`, [...path, 'cases', result]);
    }
  }
  if (!isObject(value.cases) || Object.keys(value.cases).length === 0) report('pipecat_invalid_value', `the branch of "${fn}" has no \`cases\` (result value: node)`, path, true);
  const fallback = typeof value.default === 'string' ? value.default : null;
  if (value.default !== undefined && value.default !== null && fallback === null) report('pipecat_invalid_value', 'the branch\'s `default` is not a node name: left out', [...path, 'default']);
  return { field: typeof value.field === 'string' ? value.field : '', cases, default: fallback };
}

function routeOf(fn: FunctionRef, tool: string, definition: ToolDefinition, names: ReadonlySet<string>, routes: { onToolCall: Record<string, string>; onToolResult: Record<string, string[]> }, report: Report): void {
  const unknown = (node: string, path: Path) => report('pipecat_unknown_target', `function "${fn.name}" moves to "${node}", which is not a node: the call keeps the state`, path);
  const transition = fn.transition;
  if (transition === null) return;
  const at: Path = [...fn.path, 'transition_to'];
  if (typeof transition === 'string') {
    if (names.has(transition)) setOwn(routes.onToolCall, tool, transition);
    else unknown(transition, at);
    return;
  }
  const targets: string[] = [];
  for (const { value, node } of transition.cases) {
    if (!names.has(node)) unknown(node, [...at, 'cases', value]);
    else if (!targets.includes(node)) targets.push(node);
  }
  if (targets.length > 0) setOwn(routes.onToolResult, tool, targets);
  if (transition.default !== null) {
    if (names.has(transition.default)) setOwn(routes.onToolCall, tool, transition.default);
    else unknown(transition.default, [...at, 'default']);
  }
  if (targets.length === 0) return;
  const why: string[] = [];
  const exact = transition.field === 'next_state' && transition.cases.every(({ value, node }) => value === node);
  if (!exact) {
    const example = transition.cases.find(({ value, node }) => value !== node && names.has(node)) ?? transition.cases[0]!;
    why.push(
      `Voxflow's tool result names the state it chooses in its \`next_state\` field, so where the result's \`${transition.field}\` was "${example.value}" it must say next_state: "${example.node}"`,
    );
  }
  if (definition.http === undefined) {
    why.push('in Voxflow a tool has a result when it has an http action (Pipecat\'s Python function is not run): give it one for the result to choose');
  }
  if (why.length > 0) {
    report('pipecat_branch_adapted', `the branch of "${fn.name}" becomes on_tool_result [${targets.join(', ')}]${transition.default !== null ? ` with on_tool_call ${transition.default}` : ''}; ${why.join('; ')}`, at, true);
  }
}

/** A companion definition as a Voxflow tool (the validator checks its contents afterwards), or null with why. */
function companionTool(value: unknown, from: Path, companion: Companion, reportAt: ReportAt): ToolDefinition | null {
  if (!isObject(value) || typeof value.description !== 'string') {
    reportAt('pipecat_companion_invalid', `the \`voxflow\` comment's "${String(from.at(-1))}" is not a tool with a \`description\`: it is read as if it were absent`, companion.locate(from, true));
    return null;
  }
  const tool: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (TOOL_KEYS.has(key)) tool[key] = field;
    else reportAt('pipecat_companion_invalid', `\`${key}\` is not a key of a Voxflow tool: left out`, companion.locate([...from, key], true));
  }
  return tool as ToolDefinition;
}
