// Edits the graph and the inspector make, as pure functions from the flow's data to new data.
// The editor applies the result onto the YAML text with applyJsonToYaml, which keeps comments,
// key order and styles wherever the content did not change: so every operation here changes
// only what it must, keeps the order of keys it rebuilds (a renamed state stays in its place),
// and leaves no empty maps behind that the designer did not write.
//
// Operations take data that may have validation errors (flow-data.ts reads it defensively) and
// never throw; one that makes no sense for the data (renaming a state that is not there) returns
// the data unchanged, which the editor treats as "nothing to do". The flow's settings, global
// tools and a tool's http action are edited in operations-extended.ts, with the helpers exported here.
// Over 400 lines on purpose: the state, tool and parameter edits stay together because each
// keeps the references the others make (a rename reaches transitions, result lists, globals,
// and the phone keys' targets: phone-targets.ts).
import { applyJsonToYaml } from '../../../../../server/flow/yaml-edit/index.ts';
import { retargetPhoneMoves } from '../../../../../server/flow/phone-targets.ts';
import { isRecord, listedTools, statesOf, type FlowData } from '../../../../../server/flow/graph/flow-data.ts';

export type FlowEdit = (data: FlowData) => FlowData;

type Obj = Record<string, unknown>;

/** A deep copy to change; the input stays as it was (it is the undo history's). */
export function draft(data: FlowData): FlowData {
  return structuredClone(data);
}

export function child(parent: Obj, key: string): Obj {
  const value = parent[key];
  if (isRecord(value)) return value;
  const fresh: Obj = {};
  parent[key] = fresh;
  return fresh;
}

export function stateIn(data: FlowData, name: string): Obj | null {
  const states = statesOf(data);
  if (!Object.hasOwn(states, name)) return null;
  const state = states[name];
  if (isRecord(state)) return state;
  const fresh: Obj = {};
  states[name] = fresh;
  return fresh;
}

/** A map with `from` renamed to `to` where it stood. */
function renameKey(map: Obj, from: string, to: string): Obj {
  const out: Obj = {};
  for (const [key, value] of Object.entries(map)) out[key === from ? to : key] = value;
  return out;
}

/** Removes `transitions.on_tool_call` and `transitions` when they become empty. */
function pruneTransitions(state: Obj): void {
  const transitions = state.transitions;
  if (!isRecord(transitions)) return;
  if (isRecord(transitions.on_tool_call) && Object.keys(transitions.on_tool_call).length === 0) delete transitions.on_tool_call;
  if (Object.keys(transitions).length === 0) delete state.transitions;
}

function onToolCall(state: Obj): Obj {
  return child(child(state, 'transitions'), 'on_tool_call');
}

/**
 * The definition a state's tool is edited in: the state's own, else the flow's top-level one it
 * uses (shared: an edit there is seen by every state using it), else a new one of the state's.
 */
export function definitionOf(data: FlowData, state: Obj, tool: string): Obj {
  if (isRecord(state.tools) && isRecord(state.tools[tool])) return state.tools[tool];
  if (!(isRecord(state.tools) && Object.hasOwn(state.tools, tool)) && isRecord(data.tools) && isRecord(data.tools[tool])) return data.tools[tool];
  return child(child(state, 'tools'), tool);
}

/** As definitionOf, without making one: null when the tool has no definition. */
export function existingDefinition(data: FlowData, stateName: string, tool: string): Obj | null {
  const state = stateIn(data, stateName);
  if (!state) return null;
  if (isRecord(state.tools) && Object.hasOwn(state.tools, tool)) return isRecord(state.tools[tool]) ? state.tools[tool] : null;
  return isRecord(data.tools) && isRecord(data.tools[tool]) ? data.tools[tool] : null;
}

// ---------------------------------------------------------------------------------------------
// States

export function newStateName(data: FlowData, base = 'new_state'): string {
  const states = statesOf(data);
  if (!Object.hasOwn(states, base)) return base;
  for (let i = 2; ; i++) if (!Object.hasOwn(states, `${base}_${i}`)) return `${base}_${i}`;
}

export function addState(data: FlowData, name: string): FlowData {
  if (Object.hasOwn(statesOf(data), name)) return data;
  const next = draft(data);
  child(next, 'states')[name] = { ui: { artifact_type: 'card', prompt: '' }, agent: { prompt: '', tools: [] } };
  // A flow with no start yet starts at its first state.
  if (typeof next.initial_state !== 'string' || next.initial_state === '') next.initial_state = name;
  return next;
}

/** Renames a state and every reference to it: the initial state and transitions into it. */
export function renameState(data: FlowData, from: string, to: string): FlowData {
  const states = statesOf(data);
  if (from === to || !Object.hasOwn(states, from) || Object.hasOwn(states, to)) return data;
  const next = draft(data);
  next.states = renameKey(statesOf(next), from, to);
  if (next.initial_state === from) next.initial_state = to;
  for (const state of Object.values(statesOf(next))) {
    retargetPhoneMoves(state, (target) => (target === from ? to : target));
    if (!isRecord(state) || !isRecord(state.transitions)) continue;
    if (isRecord(state.transitions.on_tool_call)) {
      const calls = state.transitions.on_tool_call;
      for (const tool of Object.keys(calls)) if (calls[tool] === from) calls[tool] = to;
    }
    forEachResultList(state, (list) => list.map((target) => (target === from ? to : target)));
  }
  for (const entry of Object.values(globalTools(next))) if (isRecord(entry) && entry.target === from) entry.target = to;
  return next;
}

/**
 * `settings.global_tools` (docs/flows.md#extended-flow-keys), or an empty map when the flow has
 * none.
 */
function globalTools(data: FlowData): Obj {
  const settings = data.settings;
  return isRecord(settings) && isRecord(settings.global_tools) ? settings.global_tools : {};
}

/** Rewrites each of a state's `on_tool_result` lists; an emptied list and map go. */
function forEachResultList(state: Obj, rewrite: (list: unknown[]) => unknown[]): void {
  const transitions = state.transitions;
  if (!isRecord(transitions) || !isRecord(transitions.on_tool_result)) return;
  const results = transitions.on_tool_result;
  for (const [tool, list] of Object.entries(results)) {
    if (!Array.isArray(list)) continue;
    const next = rewrite(list);
    if (next.length === 0) delete results[tool];
    else results[tool] = next;
  }
  if (Object.keys(results).length === 0) delete transitions.on_tool_result;
}

/**
 * Deletes a state and the transitions into it (their tools then stay where they are). When it was
 * the initial state, the first remaining state becomes the initial one.
 */
export function deleteState(data: FlowData, name: string): FlowData {
  if (!Object.hasOwn(statesOf(data), name)) return data;
  const next = draft(data);
  const states = statesOf(next);
  delete states[name];
  for (const state of Object.values(states)) {
    retargetPhoneMoves(state, (target) => (target === name ? null : target));
    if (!isRecord(state) || !isRecord(state.transitions)) continue;
    if (isRecord(state.transitions.on_tool_call)) {
      const calls = state.transitions.on_tool_call;
      for (const tool of Object.keys(calls)) if (calls[tool] === name) delete calls[tool];
    }
    forEachResultList(state, (list) => list.filter((target) => target !== name));
    pruneTransitions(state);
  }
  // A global tool that led there keeps being offered, and now keeps the state.
  for (const entry of Object.values(globalTools(next))) if (isRecord(entry) && entry.target === name) delete entry.target;
  if (next.initial_state === name) {
    const first = Object.keys(states)[0];
    if (first !== undefined) next.initial_state = first;
  }
  return next;
}

export function setInitialState(data: FlowData, name: string): FlowData {
  if (data.initial_state === name || !Object.hasOwn(statesOf(data), name)) return data;
  return { ...data, initial_state: name };
}

export function setUiPrompt(data: FlowData, stateName: string, prompt: string): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const ui = child(state, 'ui');
  // A card is the one artifact the studio renders; a new ui block is one.
  if (ui.artifact_type === undefined) ui.artifact_type = 'card';
  ui.prompt = prompt;
  return next;
}

export function setAgentPrompt(data: FlowData, stateName: string, prompt: string): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  child(state, 'agent').prompt = prompt;
  return next;
}

/** A change to what a state does on entering; a field left out is kept. */
export interface StateEntryPatch {
  say?: string;
  endSession?: boolean;
  interruptible?: boolean;
  respond?: boolean;
  context?: 'keep' | 'reset';
  endpointingMs?: number | null;
}

/**
 * Sets a state's on-entry and listening keys (docs/flows.md#extended-flow-keys). A default is
 * written as no key at all (an empty `say`, `end_session: false`, `interruptible: true`, `respond:
 * true`, `context: keep`, no endpointing), and an `on_enter` left empty goes: a flow that never
 * used these keys stays as it was written.
 */
export function setStateEntry(data: FlowData, stateName: string, patch: StateEntryPatch): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const onEnter = child(state, 'on_enter');
  const setOrDrop = (target: Obj, key: string, value: unknown, keep: boolean) => {
    if (keep) target[key] = value;
    else delete target[key];
  };
  if (patch.say !== undefined) setOrDrop(onEnter, 'say', patch.say, patch.say.trim() !== '');
  if (patch.endSession !== undefined) setOrDrop(onEnter, 'end_session', true, patch.endSession);
  if (Object.keys(onEnter).length === 0) delete state.on_enter;
  if (patch.interruptible !== undefined) setOrDrop(state, 'interruptible', false, !patch.interruptible);
  if (patch.respond !== undefined) setOrDrop(state, 'respond', false, !patch.respond);
  if (patch.context !== undefined) setOrDrop(state, 'context', 'reset', patch.context === 'reset');
  if (patch.endpointingMs !== undefined) setOrDrop(state, 'endpointing_ms', patch.endpointingMs, patch.endpointingMs !== null);
  return next;
}

/**
 * Puts a state in a group (docs/flows.md#groups), or takes it out of its group ('' or only
 * spaces): then the key goes, as a state never grouped has none.
 */
export function setStateGroup(data: FlowData, stateName: string, group: string): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const name = group.trim();
  if (name === '') delete state.group;
  else state.group = name;
  return next;
}

// ---------------------------------------------------------------------------------------------
// Tools and transitions

export interface NewTool {
  name: string;
  description: string;
  /** Where a call moves the session; null or absent: it stays. */
  target?: string | null;
}

/** Lists a tool in the state, defines it when it has no definition, and sets its transition. */
export function addTool(data: FlowData, stateName: string, tool: NewTool): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const agent = child(state, 'agent');
  const listed = listedTools(state);
  if (!listed.includes(tool.name)) agent.tools = [...(Array.isArray(agent.tools) ? agent.tools : []), tool.name];
  // A tool the flow's top-level `tools` defines is that shared tool: listed, not defined again.
  const shared = isRecord(next.tools) && isRecord(next.tools[tool.name]) && !(isRecord(state.tools) && Object.hasOwn(state.tools, tool.name));
  if (!shared) {
    const definitions = child(state, 'tools');
    if (!isRecord(definitions[tool.name])) definitions[tool.name] = { description: tool.description };
  }
  if (tool.target) onToolCall(state)[tool.name] = tool.target;
  return next;
}

export function removeTool(data: FlowData, stateName: string, tool: string): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const agent = child(state, 'agent');
  if (Array.isArray(agent.tools)) agent.tools = agent.tools.filter((t) => t !== tool);
  if (isRecord(state.tools)) {
    delete state.tools[tool];
    if (Object.keys(state.tools).length === 0) delete state.tools;
  }
  if (isRecord(state.transitions) && isRecord(state.transitions.on_tool_call)) delete state.transitions.on_tool_call[tool];
  if (isRecord(state.transitions) && isRecord(state.transitions.on_tool_result)) {
    delete state.transitions.on_tool_result[tool];
    if (Object.keys(state.transitions.on_tool_result).length === 0) delete state.transitions.on_tool_result;
  }
  pruneTransitions(state);
  return next;
}

/** Lists an already defined tool (fixes the "defined but not listed" warning). */
export function listTool(data: FlowData, stateName: string, tool: string): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state || listedTools(state).includes(tool)) return data;
  const agent = child(state, 'agent');
  agent.tools = [...(Array.isArray(agent.tools) ? agent.tools : []), tool];
  return next;
}

/**
 * Renames a tool in the list, its definition and its transition, each where it stood. A tool the
 * state does not define itself but the flow's top-level `tools` does is one shared definition:
 * renaming it renames that definition, every state that uses it without a definition of its
 * own, and its `settings.global_tools` entry, so no state is left listing a name nothing defines.
 */
export function renameTool(data: FlowData, stateName: string, from: string, to: string): FlowData {
  const state = stateIn(data, stateName);
  if (!state || from === to) return data;
  const ownsIt = isRecord(state.tools) && Object.hasOwn(state.tools, from);
  const shared = !ownsIt && isRecord(data.tools) && Object.hasOwn(data.tools, from);
  const taken =
    listedTools(state).includes(to) || (isRecord(state.tools) && Object.hasOwn(state.tools, to)) || (shared && isRecord(data.tools) && Object.hasOwn(data.tools, to));
  if (taken) return data;
  const next = draft(data);
  const renameIn = (copy: Obj) => {
    const agent = child(copy, 'agent');
    if (Array.isArray(agent.tools)) agent.tools = agent.tools.map((t) => (t === from ? to : t));
    if (isRecord(copy.tools)) copy.tools = renameKey(copy.tools, from, to);
    if (isRecord(copy.transitions) && isRecord(copy.transitions.on_tool_call)) {
      copy.transitions.on_tool_call = renameKey(copy.transitions.on_tool_call, from, to);
    }
    if (isRecord(copy.transitions) && isRecord(copy.transitions.on_tool_result)) {
      copy.transitions.on_tool_result = renameKey(copy.transitions.on_tool_result, from, to);
    }
  };
  renameIn(stateIn(next, stateName)!);
  if (shared) {
    next.tools = renameKey(next.tools as Obj, from, to);
    for (const [name, other] of Object.entries(statesOf(next))) {
      if (name === stateName || !isRecord(other)) continue;
      // A state with a definition of its own under that name keeps its own tool.
      if (isRecord(other.tools) && Object.hasOwn(other.tools, from)) continue;
      if (listedTools(other).includes(to)) continue;
      renameIn(other);
    }
    const settings = next.settings;
    if (isRecord(settings) && isRecord(settings.global_tools) && Object.hasOwn(settings.global_tools, from)) {
      settings.global_tools = renameKey(settings.global_tools, from, to);
    }
  }
  return next;
}

export interface ToolPatch {
  description?: string;
  /** Empty text or null removes the cue. */
  speechCue?: string | null;
}

export function updateTool(data: FlowData, stateName: string, tool: string, patch: ToolPatch): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const definition = definitionOf(next, state, tool);
  if (patch.description !== undefined) definition.description = patch.description;
  if (patch.speechCue !== undefined) {
    if (patch.speechCue === null || patch.speechCue === '') delete definition.speech_cue;
    else definition.speech_cue = patch.speechCue;
  }
  if (definition.description === undefined) definition.description = '';
  return next;
}

/** Points a tool's transition at `target`, or removes it (null: the tool stays). */
export function setTransition(data: FlowData, stateName: string, tool: string, target: string | null): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  if (target === null) {
    if (isRecord(state.transitions) && isRecord(state.transitions.on_tool_call)) delete state.transitions.on_tool_call[tool];
    pruneTransitions(state);
  } else {
    onToolCall(state)[tool] = target;
  }
  return next;
}

// ---------------------------------------------------------------------------------------------
// Parameters

export interface ParameterSpec {
  type: string;
  required: boolean;
}

/** Sets a parameter's type and required flag (adding it when new); `required: false` is omitted. */
export function setParameter(data: FlowData, stateName: string, tool: string, parameter: string, spec: ParameterSpec): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const definition = definitionOf(next, state, tool);
  if (definition.description === undefined) definition.description = '';
  const parameters = child(definition, 'parameters');
  const entry = isRecord(parameters[parameter]) ? parameters[parameter] : {};
  entry.type = spec.type;
  if (spec.required) entry.required = true;
  else delete entry.required;
  parameters[parameter] = entry;
  return next;
}

/**
 * What the model is told of a parameter (docs/flows.md#extended-flow-keys); a field left out is
 * kept, '' or null removes it.
 */
export interface ParameterDetails {
  description?: string;
  enum?: Array<string | number | boolean> | null;
}

export function setParameterDetails(data: FlowData, stateName: string, tool: string, parameter: string, details: ParameterDetails): FlowData {
  const next = draft(data);
  const definition = existingDefinition(next, stateName, tool);
  if (!definition) return data;
  const parameters = definition.parameters;
  if (!isRecord(parameters) || !isRecord(parameters[parameter])) return data;
  const entry = parameters[parameter] as Obj;
  if (details.description !== undefined) {
    if (details.description.trim() === '') delete entry.description;
    else entry.description = details.description;
  }
  if (details.enum !== undefined) {
    if (details.enum === null || details.enum.length === 0) delete entry.enum;
    else entry.enum = details.enum;
  }
  return next;
}

/** "monday, tuesday" as the values of a parameter of `type`; a value that is not of it stays text (the validator says so). */
export function parseEnumText(text: string, type: string): Array<string | number | boolean> | null {
  const parts = text.split(',').map((part) => part.trim()).filter((part) => part !== '');
  if (parts.length === 0) return null;
  return parts.map((part) => {
    if ((type === 'number' || type === 'integer') && part !== '' && Number.isFinite(Number(part))) return Number(part);
    if (type === 'boolean' && (part === 'true' || part === 'false')) return part === 'true';
    return part;
  });
}

export function renameParameter(data: FlowData, stateName: string, tool: string, from: string, to: string): FlowData {
  const parameters = existingDefinition(data, stateName, tool)?.parameters;
  if (from === to || !isRecord(parameters) || !Object.hasOwn(parameters, from) || Object.hasOwn(parameters, to)) return data;
  const next = draft(data);
  const definition = existingDefinition(next, stateName, tool)!;
  definition.parameters = renameKey(definition.parameters as Obj, from, to);
  return next;
}

export function removeParameter(data: FlowData, stateName: string, tool: string, parameter: string): FlowData {
  const next = draft(data);
  const definition = existingDefinition(next, stateName, tool);
  if (!definition || !isRecord(definition.parameters) || !Object.hasOwn(definition.parameters, parameter)) return data;
  delete definition.parameters[parameter];
  if (Object.keys(definition.parameters).length === 0) delete definition.parameters;
  return next;
}

// ---------------------------------------------------------------------------------------------
// The flow itself

export function setFlowField(data: FlowData, field: 'id' | 'version', value: string): FlowData {
  return data[field] === value ? data : { ...data, [field]: value };
}

export function setBaseSystemPrompt(data: FlowData, prompt: string): FlowData {
  const next = draft(data);
  const settings = child(next, 'settings');
  if (prompt === '') {
    delete settings.base_system_prompt;
    if (Object.keys(settings).length === 0) delete next.settings;
  } else {
    settings.base_system_prompt = prompt;
  }
  return next;
}

// ---------------------------------------------------------------------------------------------
// Onto the text

/**
 * The YAML text with an edit applied: `data` is the text's data, the edit's result is written
 * back keeping the text's comments and layout. Null when the edit changes nothing.
 */
export function applyEditToText(text: string, data: FlowData, edit: FlowEdit): { text: string; data: FlowData } | null {
  const next = edit(data);
  if (next === data) return null;
  const written = applyJsonToYaml(text, next);
  return written === text ? null : { text: written, data: next };
}
