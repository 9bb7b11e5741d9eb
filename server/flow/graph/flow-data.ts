// The flow as the editor reads it: the plain data of the YAML (yamlToJson), which may still have
// validation errors. parseFlow only hands back a document when there are none, but a designer
// who points a transition at a state that does not exist yet must still see and edit the graph,
// so everything here reads the data defensively (wrong shapes read as empty) and never throws.
import type { ParameterType } from '../types.ts';

/** The root of a flow's data: a map, as YAML gives it (possibly with errors in it). */
export type FlowData = Record<string, unknown>;

export interface ParameterView {
  name: string;
  type: ParameterType | string;
  required: boolean;
  /** Given to the model in the tool's schema (docs/flows.md#extended-flow-keys); '' when none. */
  description?: string;
  /** The only values the model may send; null when any value of the type goes. */
  enum?: Array<string | number | boolean> | null;
}

export interface ToolView {
  name: string;
  /** Listed in the state's `agent.tools`: the model may call it there. */
  listed: boolean;
  /** Has a definition under the state's `tools`. */
  defined: boolean;
  description: string;
  speechCue: string | null;
  parameters: ParameterView[];
  /** The state a call moves to (`transitions.on_tool_call`), null when the tool stays. */
  target: string | null;
  /** Defined by the flow's top-level `tools`, not by the state (absent in older views: false). */
  shared?: boolean;
  /**
   * The call the engine makes to the account's service (docs/flows.md#extended-flow-keys); null
   * when the model's.
   */
  http?: HttpView | null;
  /** The states the http result may choose (`transitions.on_tool_result`), in order. */
  resultTargets?: string[];
}

/** A tool's `http` action, defaults filled in. */
export interface HttpView {
  url: string;
  method: string;
  /** null: the engine's default (5000). */
  timeoutMs: number | null;
  /** In written order; a value may name a secret as `{secret.NAME}`. */
  headers: Array<{ name: string; value: string }>;
  /** `store`, in written order: the variable each answer field (a dotted path) is kept in (absent in older views: none). */
  store?: Array<{ variable: string; field: string }>;
}

function readHttp(value: unknown): HttpView | null {
  if (!isRecord(value)) return null;
  return {
    url: text(value.url),
    method: text(value.method) || 'POST',
    timeoutMs: typeof value.timeout_ms === 'number' ? value.timeout_ms : null,
    headers: Object.entries(record(value.headers)).map(([name, v]) => ({ name, value: text(v) })),
    store: Object.entries(record(value.store)).map(([variable, field]) => ({ variable, field: text(field) })),
  };
}

/**
 * What a state does on entering and how it listens (docs/flows.md#extended-flow-keys), defaults
 * filled in.
 */
export interface StateEntryView {
  /** `on_enter.set`, in order, each value as text (absent in older views: none). */
  set?: Array<{ name: string; value: string }>;
  say: string;
  endSession: boolean;
  /** false: what is said on entering cannot be interrupted. */
  interruptible: boolean;
  /** false: the model does not speak on entering. */
  respond: boolean;
  context: 'keep' | 'reset';
  /** null: the server's default. */
  endpointingMs: number | null;
}

/** A state's own turn-taking (`turn`, docs/flows.md#turn-taking); null: the flow's or server's. */
export interface TurnView {
  minInterruptionWords: number | null;
  backchannels: 'ignore' | 'interrupt' | null;
  endpointingMs: number | null;
  maxEndpointingMs: number | null;
}

export function readTurn(state: unknown): TurnView {
  const turn = record(record(state).turn);
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  return {
    minInterruptionWords: number(turn.min_interruption_words),
    backchannels: turn.backchannels === 'ignore' || turn.backchannels === 'interrupt' ? turn.backchannels : null,
    endpointingMs: number(turn.endpointing_ms),
    maxEndpointingMs: number(turn.max_endpointing_ms),
  };
}

export interface StateView {
  name: string;
  uiPrompt: string;
  agentPrompt: string;
  /** Listed tools first, in list order; then tools only defined or only in transitions. */
  tools: ToolView[];
  /** Absent in views made before the extended keys (tests); read as the defaults. */
  entry?: StateEntryView;
  /** The group it is drawn in (`group`); '' for none. Absent in views made before groups (tests). */
  group?: string;
  /** Its `turn`; absent in views made before turn-taking (tests): read as unset. */
  turn?: TurnView;
}

export function readEntry(state: unknown): StateEntryView {
  const raw = record(state);
  const onEnter = record(raw.on_enter);
  return {
    set: Object.entries(record(onEnter.set)).map(([name, value]) => ({ name, value: ['string', 'number', 'boolean'].includes(typeof value) ? String(value) : '' })),
    say: text(onEnter.say),
    endSession: onEnter.end_session === true,
    interruptible: raw.interruptible !== false,
    respond: raw.respond !== false,
    context: raw.context === 'reset' ? 'reset' : 'keep',
    endpointingMs: typeof raw.endpointing_ms === 'number' ? raw.endpointing_ms : null,
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

export function statesOf(data: FlowData | null): Record<string, unknown> {
  return record(data?.states);
}

export function stateNames(data: FlowData | null): string[] {
  return Object.keys(statesOf(data));
}

export function initialStateOf(data: FlowData | null): string | null {
  const initial = data?.initial_state;
  return typeof initial === 'string' ? initial : null;
}

export function listedTools(state: unknown): string[] {
  const tools = record(record(state).agent).tools;
  return Array.isArray(tools) ? tools.filter((t): t is string => typeof t === 'string') : [];
}

export function transitionsOf(state: unknown): Record<string, string> {
  const onToolCall = record(record(record(state).transitions).on_tool_call);
  const out: Record<string, string> = {};
  for (const [tool, target] of Object.entries(onToolCall)) if (typeof target === 'string') out[tool] = target;
  return out;
}

function readParameters(value: unknown): ParameterView[] {
  return Object.entries(record(value)).map(([name, spec]) => ({
    name,
    type: text(record(spec).type) || 'string',
    required: record(spec).required === true,
    description: text(record(spec).description),
    enum: Array.isArray(record(spec).enum) ? (record(spec).enum as unknown[]).filter((v): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v)) : null,
  }));
}

/**
 * A state as the inspector shows it. `shared` is the flow's top-level `tools`: a tool the state
 * lists without defining reads its definition from there (and says so).
 */
export function readState(name: string, state: unknown, shared: Record<string, unknown> = {}): StateView {
  const definitions = record(record(state).tools);
  const results = record(record(record(state).transitions).on_tool_result);
  const transitions = transitionsOf(state);
  const listed = listedTools(state);
  const order = [...new Set([...listed, ...Object.keys(definitions), ...Object.keys(transitions)])];
  const listedSet = new Set(listed);
  return {
    name,
    uiPrompt: text(record(record(state).ui).prompt),
    agentPrompt: text(record(record(state).agent).prompt),
    entry: readEntry(state),
    group: text(record(state).group),
    turn: readTurn(state),
    tools: order.map((tool) => {
      const own = Object.hasOwn(definitions, tool);
      const fromShared = !own && Object.hasOwn(shared, tool);
      const definition = own ? definitions[tool] : fromShared ? shared[tool] : undefined;
      const cue = record(definition).speech_cue;
      const branches = results[tool];
      return {
        name: tool,
        listed: listedSet.has(tool),
        defined: Object.hasOwn(definitions, tool),
        description: text(record(definition).description),
        speechCue: typeof cue === 'string' ? cue : null,
        parameters: readParameters(record(definition).parameters),
        target: Object.hasOwn(transitions, tool) ? transitions[tool]! : null,
        shared: fromShared,
        http: readHttp(record(definition).http),
        resultTargets: Array.isArray(branches) ? branches.filter((t): t is string => typeof t === 'string') : [],
      };
    }),
  };
}

/**
 * Each state read from the very object read last time is that reading again: a keystroke in a
 * big flow changes one state, and the flow worker's answer keeps every other one as the object
 * the page already has (analysis-delta.ts), so the graph reads one state instead of all of them.
 * An edit on the page writes into a deep copy (operations.ts), never into an object read here.
 */
const readBefore = new WeakMap<object, { name: string; shared: unknown; view: StateView }>();

export function readStates(data: FlowData | null): StateView[] {
  const shared = data?.tools;
  return Object.entries(statesOf(data)).map(([name, state]) => {
    if (!isRecord(state)) return readState(name, state, record(shared));
    const before = readBefore.get(state);
    if (before && before.name === name && before.shared === shared) return before.view;
    const view = readState(name, state, record(shared));
    readBefore.set(state, { name, shared, view });
    return view;
  });
}

export function findState(data: FlowData | null, name: string): StateView | null {
  const states = statesOf(data);
  return Object.hasOwn(states, name) ? readState(name, states[name], record(data?.tools)) : null;
}

/**
 * The flow's `settings` (docs/flows.md#extended-flow-keys) as the flow panel shows them; '' and
 * null for absent.
 */
export interface FlowSettingsView {
  llmModel: string;
  llmTemperature: number | null;
  voiceProvider: string;
  voiceName: string;
  sttModel: string;
  language: string;
  recording: boolean;
  idleAfterSecs: number | null;
  idleReprompt: string;
  idleMaxReprompts: number | null;
  /** `settings.global_tools`: a tool offered in every state, and where a call moves (null: stays). */
  globalTools: Array<{ name: string; target: string | null }>;
  /** The top-level `tools`: the definitions a global tool can be. */
  sharedTools: string[];
}

export function readFlowSettings(data: FlowData | null): FlowSettingsView {
  const settings = record(data?.settings);
  const llm = record(settings.llm);
  const voice = record(settings.voice);
  const idle = record(settings.idle);
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  return {
    llmModel: text(llm.model),
    llmTemperature: number(llm.temperature),
    voiceProvider: text(voice.provider),
    voiceName: text(voice.voice),
    sttModel: text(record(settings.stt).model),
    language: text(settings.language),
    recording: settings.recording === true,
    idleAfterSecs: number(idle.after_secs),
    idleReprompt: text(idle.reprompt),
    idleMaxReprompts: number(idle.max_reprompts),
    globalTools: Object.entries(record(settings.global_tools)).map(([name, entry]) => ({ name, target: text(record(entry).target) || null })),
    sharedTools: Object.keys(record(data?.tools)),
  };
}

/**
 * Whether a tool has an `http` action, defined in a state or in the shared `tools:`: such a flow
 * needs the account's tool signing secret.
 */
export function usesHttpTools(data: FlowData | null): boolean {
  const hasHttp = (tools: unknown) => Object.values(record(tools)).some((tool) => isRecord(record(tool).http));
  return hasHttp(data?.tools) || Object.values(statesOf(data)).some((state) => hasHttp(record(state).tools));
}
