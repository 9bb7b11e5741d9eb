// Edits of the extended flow-wide and http keys, made by the flow panel and the tool card:
// the flow's settings (model, voice, speech recognition, language, recording, idle reprompts), its
// global tools, and a tool's http action and result branches. Same rules as operations.ts: pure,
// never throw, change only what they must, and write a default as no key at all (an emptied map
// goes too), so a flow that never used these keys stays as it was written.
import { isRecord, statesOf, type FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { child, definitionOf, draft, existingDefinition, stateIn } from './operations.ts';

type Obj = Record<string, unknown>;

function setOrDrop(target: Obj, key: string, value: unknown): void {
  if (value === null || value === undefined || value === '') delete target[key];
  else target[key] = value;
}

function dropIfEmpty(parent: Obj, key: string): void {
  if (isRecord(parent[key]) && Object.keys(parent[key]).length === 0) delete parent[key];
}

/** A change to the flow's settings; a field left out is kept, '' or null removes the key. */
export interface FlowSettingsPatch {
  llmModel?: string;
  llmTemperature?: number | null;
  voiceProvider?: string;
  voiceName?: string;
  sttModel?: string;
  language?: string;
  recording?: boolean;
  /** null removes the whole `idle` block: its reprompt means nothing without the wait. */
  idleAfterSecs?: number | null;
  idleReprompt?: string;
  idleMaxReprompts?: number | null;
}

export function setFlowSettings(data: FlowData, patch: FlowSettingsPatch): FlowData {
  const next = draft(data);
  const settings = child(next, 'settings');
  const sub = (key: string, field: string, value: unknown) => {
    setOrDrop(child(settings, key), field, value);
    dropIfEmpty(settings, key);
  };
  if (patch.llmModel !== undefined) sub('llm', 'model', patch.llmModel.trim());
  if (patch.llmTemperature !== undefined) sub('llm', 'temperature', patch.llmTemperature);
  if (patch.voiceProvider !== undefined) sub('voice', 'provider', patch.voiceProvider.trim());
  if (patch.voiceName !== undefined) sub('voice', 'voice', patch.voiceName.trim());
  if (patch.sttModel !== undefined) sub('stt', 'model', patch.sttModel.trim());
  if (patch.language !== undefined) setOrDrop(settings, 'language', patch.language.trim());
  if (patch.recording !== undefined) setOrDrop(settings, 'recording', patch.recording ? true : null);
  if (patch.idleAfterSecs === null) delete settings.idle;
  else if (patch.idleAfterSecs !== undefined) child(settings, 'idle').after_secs = patch.idleAfterSecs;
  // A reprompt or a limit given before the wait is kept only with one (the validator needs it).
  if (isRecord(settings.idle)) {
    if (patch.idleReprompt !== undefined) setOrDrop(settings.idle, 'reprompt', patch.idleReprompt.trim() === '' ? null : patch.idleReprompt);
    if (patch.idleMaxReprompts !== undefined) setOrDrop(settings.idle, 'max_reprompts', patch.idleMaxReprompts);
  }
  dropIfEmpty(next, 'settings');
  return next;
}

/**
 * Offers a top-level tool in every state (`settings.global_tools`), with the state a call moves
 * to (null: the session stays where it is); `entry` null stops offering it. A tool the flow does
 * not define at the top level cannot be global (the validator would refuse it): nothing changes.
 */
export function setGlobalTool(data: FlowData, tool: string, entry: { target: string | null } | null): FlowData {
  const next = draft(data);
  const settings = child(next, 'settings');
  if (entry === null) {
    if (!isRecord(settings.global_tools) || !Object.hasOwn(settings.global_tools, tool)) return data;
    delete settings.global_tools[tool];
    dropIfEmpty(settings, 'global_tools');
    dropIfEmpty(next, 'settings');
    return next;
  }
  if (!isRecord(data.tools) || !Object.hasOwn(data.tools, tool)) return data;
  const globals = child(settings, 'global_tools');
  const current = isRecord(globals[tool]) ? globals[tool] : {};
  setOrDrop(current, 'target', entry.target);
  globals[tool] = current;
  return next;
}

/** A change to a tool's http action; a field left out is kept. */
export interface HttpPatch {
  url?: string;
  /** POST, the default, is written as no key. */
  method?: string;
  /** null: the engine's default (5000 ms). */
  timeoutMs?: number | null;
  /** The headers in order; an empty list removes `headers`. */
  headers?: Array<{ name: string; value: string }>;
  /** The variables kept from a successful answer (`store`), in order; an empty list removes `store`. */
  store?: Array<{ variable: string; field: string }>;
}

/**
 * Makes the tool an http tool, changes its action, or (patch null) makes it the model's own tool
 * again. It is edited where the tool is defined: a shared top-level tool for every state using it.
 */
export function setHttpAction(data: FlowData, stateName: string, tool: string, patch: HttpPatch | null): FlowData {
  if (patch === null) {
    const next = draft(data);
    const definition = existingDefinition(next, stateName, tool);
    if (!definition || !isRecord(definition.http)) return data;
    delete definition.http;
    return next;
  }
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const definition = definitionOf(next, state, tool);
  if (definition.description === undefined) definition.description = '';
  // A new action starts with its url, so it is written first; an existing one keeps its order.
  const http = child(definition, 'http');
  if (http.url === undefined) http.url = '';
  if (patch.url !== undefined) http.url = patch.url.trim();
  if (patch.method !== undefined) setOrDrop(http, 'method', patch.method === 'POST' ? null : patch.method);
  if (patch.timeoutMs !== undefined) setOrDrop(http, 'timeout_ms', patch.timeoutMs);
  if (patch.headers !== undefined) {
    const headers: Obj = {};
    for (const { name, value } of patch.headers) if (name.trim() !== '') headers[name.trim()] = value;
    setOrDrop(http, 'headers', Object.keys(headers).length === 0 ? null : headers);
  }
  if (patch.store !== undefined) {
    const store: Obj = {};
    for (const { variable, field } of patch.store) if (variable.trim() !== '') store[variable.trim()] = field.trim();
    setOrDrop(http, 'store', Object.keys(store).length === 0 ? null : store);
  }
  return next;
}

/** `{secret.NAME}` as a header value: how a flow names an account secret without writing it. */
export function secretReference(name: string): string {
  return `{secret.${name}}`;
}

/** The states a tool's http result may choose in this state (`on_tool_result`); empty removes it. */
export function setResultTargets(data: FlowData, stateName: string, tool: string, targets: string[]): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const known = new Set(Object.keys(statesOf(next)));
  const list = [...new Set(targets)].filter((t) => known.has(t));
  const transitions = child(state, 'transitions');
  const results = child(transitions, 'on_tool_result');
  if (list.length === 0) delete results[tool];
  else results[tool] = list;
  dropIfEmpty(transitions, 'on_tool_result');
  dropIfEmpty(state, 'transitions');
  return next;
}

/**
 * A state's `on_enter.set` (the variables set on entering, before `say`), in order; an empty list
 * removes it, and `on_enter` with it when nothing else is there. A value is read as YAML would
 * read it unquoted: `3` a number, `true` a boolean, anything else text.
 */
export function setEntryVariables(data: FlowData, stateName: string, entries: Array<{ name: string; value: string }>): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const onEnter = child(state, 'on_enter');
  const set: Obj = {};
  for (const { name, value } of entries) if (name.trim() !== '') set[name.trim()] = scalar(value);
  if (Object.keys(set).length === 0) delete onEnter.set;
  // A new `set` goes first: it runs before `say`, and reads so.
  else if (!isRecord(onEnter.set)) state.on_enter = { set, ...onEnter };
  else onEnter.set = set;
  dropIfEmpty(state, 'on_enter');
  return next;
}

function scalar(text: string): string | number | boolean {
  const trimmed = text.trim();
  if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true';
  if (trimmed !== '' && /^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  return text;
}
