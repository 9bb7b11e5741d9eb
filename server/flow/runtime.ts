// The state machine one session runs: which prompt and tools the model sees, and what a tool
// call does to the state and the variables. Pure and deterministic, so the studio can replay a
// flow in the browser exactly as the engine runs it.
//
// DESIGN §12 adds what the runtime decides without the model (on-entry actions, global tools,
// result transitions); what takes time or the network (an http tool's request, speaking, ending
// the call, idle timers) it describes, and the engine does (engine/agent-turn.ts).

import { MAX_TOOL_ROUNDS_PER_TURN } from './types.ts';
import type { FlowDocument, FlowState, HttpAction, ToolDefinition } from './types.ts';
import { renderTemplate } from './template.ts';
import { ownValue, setOwn } from './own-keys.ts';
import { checkArguments, parseArguments, type ToolArguments } from './tool-arguments.ts';
import type { VariableValue } from './template.ts';
import { toolSchema, type OpenAITool } from './tool-schemas.ts';
import { resultField, toVariable } from './tool-results.ts';
import { DEFAULT_HTTP_TIMEOUT_MS, NEXT_STATE_FIELD } from './runtime-types.ts';
import type {
  AcceptedToolCall,
  FlowRuntimeOptions,
  FlowSnapshot,
  HttpToolRequest,
  HttpToolResponse,
  RejectedToolCall,
  RejectionCode,
  StateEntry,
  ToolCallOutcome,
  ToolResultOutcome,
} from './runtime-types.ts';

export type { VariableValue } from './template.ts';
export type { OpenAITool, OpenAIToolProperty } from './tool-schemas.ts';
export type { ToolArguments } from './tool-arguments.ts';
export { DEFAULT_HTTP_TIMEOUT_MS, NEXT_STATE_FIELD } from './runtime-types.ts';
export type {
  AcceptedToolCall,
  FlowRuntimeOptions,
  FlowSnapshot,
  HttpToolRequest,
  HttpToolResponse,
  RejectedToolCall,
  RejectionCode,
  StateEntry,
  ToolCallOutcome,
  ToolResultOutcome,
} from './runtime-types.ts';

const DEFAULT_ARTIFACT_TYPE = 'card';

/**
 * Runs one session's flow. A committed tool call is final: there is deliberately no undo, so a
 * user interrupting the agent (barge-in) never rolls the state or the variables back. The engine
 * relies on this; a flow that rolled back on interruption would get stuck half-way through a
 * transition whose speech cue the user already heard.
 *
 * The document must be one the validator accepted; it is read, never copied, so do not mutate it.
 */
export class FlowRuntime {
  readonly #document: FlowDocument;
  #state: string;
  readonly #path: string[] = [];
  readonly #variables = new Map<string, VariableValue>();
  #variablesView: Readonly<Record<string, VariableValue>> | null = null;
  #roundsUsed = 0;
  #callsInResponse = 0;
  #movedToInResponse: string | null = null;
  #callNumber = 0;
  /** Http calls waiting for their answer: the state they were made in, and how many moves there were then. */
  readonly #pendingHttp = new Map<number, { state: string; moves: number }>();
  readonly #initialEntry: StateEntry;

  constructor(document: FlowDocument, options: FlowRuntimeOptions = {}) {
    this.#document = document;
    assertStatesExist(document);
    for (const [name, value] of Object.entries(options.context ?? {})) {
      const variable = contextValueToVariable(value);
      if (variable !== undefined) this.#variables.set(name, variable);
    }
    this.#state = document.initial_state;
    this.#path.push(document.initial_state);
    this.#initialEntry = this.#enter(document.initial_state);
  }

  /** What entering the initial state asked for (its `on_enter.set` is applied by the constructor). */
  get initialEntry(): StateEntry {
    return this.#initialEntry;
  }

  get state(): string {
    return this.#state;
  }

  /** A frozen copy; it does not change when the runtime does. */
  get variables(): Readonly<Record<string, VariableValue>> {
    this.#variablesView ??= Object.freeze(Object.fromEntries(this.#variables));
    return this.#variablesView;
  }

  /** Every state entered, in order, starting with the initial state. */
  get path(): readonly string[] {
    return Object.freeze([...this.#path]);
  }

  /** Tool rounds the current user turn still allows, counting the response now being made. */
  get toolRoundsLeft(): number {
    return Math.max(0, MAX_TOOL_ROUNDS_PER_TURN - this.#roundsUsed);
  }

  systemPrompt(): string {
    const base = renderTemplate(this.#document.settings?.base_system_prompt ?? '', this.variables);
    const statePrompt = renderTemplate(this.#currentState().agent.prompt, this.variables);
    return base.trim() === '' ? statePrompt : `${base}\n\n${statePrompt}`;
  }

  uiPrompt(): string {
    return renderTemplate(this.#currentState().ui?.prompt ?? '', this.variables);
  }

  artifactType(): string {
    return this.#currentState().ui?.artifact_type ?? DEFAULT_ARTIFACT_TYPE;
  }

  /**
   * The tools the current state lets the model call, duplicates removed, in listed order, then
   * the flow's global tools the state neither lists nor hides with its own tool of that name.
   */
  listedTools(): string[] {
    const state = this.#currentState();
    const listed = new Set(state.agent.tools ?? []);
    for (const name of Object.keys(this.#document.settings?.global_tools ?? {})) {
      if (!ownValue(state.tools, name) && ownValue(this.#document.tools, name)) listed.add(name);
    }
    return [...listed];
  }

  /** Exactly the current state's tools; none once the turn's rounds are spent, so the model must answer in words. */
  toolSchemas(): OpenAITool[] {
    if (this.toolRoundsLeft === 0) return [];
    return this.listedTools().map((name) => toolSchema(name, this.#definition(name)));
  }

  /** The flow's own model and temperature (`settings.llm`), for each model request; empty when it sets none. */
  modelOptions(): { model?: string; temperature?: number } {
    const llm = this.#document.settings?.llm;
    return { ...(llm?.model !== undefined ? { model: llm.model } : {}), ...(llm?.temperature !== undefined ? { temperature: llm.temperature } : {}) };
  }

  /** The current state's barge-in and end-of-turn settings. */
  stateOptions(): { interruptible: boolean; endpointingMs: number | null } {
    const state = this.#currentState();
    return { interruptible: state.interruptible !== false, endpointingMs: state.endpointing_ms ?? null };
  }

  /** `settings.idle` with its reprompt rendered now; null when the flow sets none. */
  idle(): { afterMs: number; reprompt: string | null; maxReprompts: number } | null {
    const idle = this.#document.settings?.idle;
    if (!idle) return null;
    const reprompt = idle.reprompt === undefined ? '' : renderTemplate(idle.reprompt, this.variables);
    return { afterMs: idle.after_secs * 1000, reprompt: reprompt.trim() === '' ? null : reprompt, maxReprompts: idle.max_reprompts ?? 1 };
  }

  beginUserTurn(): void {
    this.#roundsUsed = 0;
    this.#callsInResponse = 0;
    this.#movedToInResponse = null;
  }

  /**
   * Call before each model response. A response counts as a round when any tool call was
   * applied from it, rejected ones included: otherwise a model that keeps calling a tool
   * that does not exist would loop for ever inside one user turn. When `toolRoundsLeft` is 0
   * the model is offered no tools; if it calls one anyway the call is rejected, and the engine
   * should end the turn rather than run the model again.
   */
  beginModelResponse(): void {
    if (this.#callsInResponse > 0) this.#roundsUsed += 1;
    this.#callsInResponse = 0;
    this.#movedToInResponse = null;
  }

  applyToolCall(name: string, args: ToolArguments): ToolCallOutcome {
    this.#callsInResponse += 1;
    const fromState = this.#state;
    const parsed = parseArguments(args);
    const reject = (code: RejectionCode, reason: string): RejectedToolCall => ({
      status: 'rejected',
      name,
      arguments: parsed.given,
      fromState,
      toState: fromState,
      code,
      reason,
      result: { ok: false, error: reason },
    });

    if (this.toolRoundsLeft === 0) {
      return reject(
        'round_limit',
        `the limit of ${MAX_TOOL_ROUNDS_PER_TURN} tool rounds per user turn is reached; answer the user in words`,
      );
    }
    if (this.#movedToInResponse !== null) {
      return reject(
        'state_changed',
        `the state changed to '${this.#movedToInResponse}'; call tools of the new state in your next response`,
      );
    }
    const listed = this.listedTools();
    if (!listed.includes(name)) {
      const available =
        listed.length === 0
          ? `no tools are available in state '${fromState}'`
          : `available tools: ${listed.join(', ')}`;
      return reject('unlisted_tool', `tool '${name}' is not available in state '${fromState}'; ${available}`);
    }
    if (!parsed.ok) {
      return reject('invalid_arguments', `arguments for tool '${name}' ${parsed.problem}; send a JSON object`);
    }

    const state = this.#currentState();
    const definition = this.#definition(name);
    const checked = checkArguments(definition?.parameters ?? {}, parsed.value);
    if (checked.problems.length > 0) {
      // A missing argument is reported as the code when there is one: supplying it is the
      // first thing the model has to fix. The reason lists every problem either way.
      const code = checked.problems.some((p) => p.kind === 'missing') ? 'missing_argument' : 'mistyped_argument';
      const details = checked.problems.map((p) => p.message).join('; ');
      return reject(code, `invalid arguments for tool '${name}': ${details}`);
    }

    for (const [parameter, value] of Object.entries(checked.values)) this.#variables.set(parameter, value);
    this.#variablesView = null;

    const cue = definition?.speech_cue;
    const rendered = cue === undefined ? '' : renderTemplate(cue, this.variables);
    const speechCue = rendered.trim() === '' ? null : rendered;

    if (definition?.http) {
      // The move waits for the answer: the result may choose it (on_tool_result).
      const callNumber = ++this.#callNumber;
      this.#pendingHttp.set(callNumber, { state: fromState, moves: this.#path.length });
      return {
        status: 'accepted',
        name,
        arguments: checked.values,
        fromState,
        toState: fromState,
        moved: false,
        speechCue,
        result: speechCue === null ? { ok: true, state: fromState } : { ok: true, state: fromState, spoken: speechCue },
        http: httpRequest(callNumber, name, definition.http, checked.values, this.variables),
      };
    }

    const target = this.#callTarget(state, name);
    const entered = this.#moveTo(target);
    return {
      status: 'accepted',
      name,
      arguments: checked.values,
      fromState,
      toState: this.#state,
      moved: entered !== null,
      speechCue,
      result: speechCue === null ? { ok: true, state: this.#state } : { ok: true, state: this.#state, spoken: speechCue },
      ...(entered ? { entered } : {}),
    };
  }

  /**
   * The answer to an http tool's call. On success its `http.store` fields become variables, and
   * the session moves to the state the answer names in `next_state` when the state's
   * `on_tool_result` lists it for this tool, else to the tool's `on_tool_call` (or global)
   * target; a state the document does not list is refused, and the model is told. A failure
   * (the engine's error, a timeout) stays, and the model gets the error. An answer that comes
   * after the session moved on stores its fields but moves nothing.
   */
  applyToolResult(request: HttpToolRequest, response: HttpToolResponse): ToolResultOutcome {
    const pending = this.#pendingHttp.get(request.callNumber);
    this.#pendingHttp.delete(request.callNumber);
    const fromState = this.#state;
    const base = { name: request.tool, fromState };
    if (!response.ok) {
      return { ...base, toState: fromState, moved: false, entered: null, stored: {}, result: { ok: false, state: fromState, error: response.error } };
    }

    const definition = pending ? this.#definitionIn(pending.state, request.tool) : undefined;
    const stored: Record<string, VariableValue> = {};
    for (const [variable, path] of Object.entries(definition?.http?.store ?? {})) {
      const value = toVariable(resultField(response.body, path));
      if (value === undefined) continue;
      setOwn(stored, variable, value);
      this.#variables.set(variable, value);
    }
    if (Object.keys(stored).length > 0) this.#variablesView = null;

    let note: string | undefined;
    let target: string | undefined;
    const stillThere = pending !== undefined && pending.state === fromState && pending.moves === this.#path.length;
    if (stillThere) {
      const state = this.#currentState();
      const asked = resultField(response.body, NEXT_STATE_FIELD);
      const allowed = ownValue(state.transitions?.on_tool_result, request.tool) ?? [];
      if (typeof asked === 'string' && allowed.includes(asked)) {
        target = asked;
      } else {
        if (asked !== undefined) {
          note = `the result's next_state ${JSON.stringify(asked)} is not one this tool may lead to (${allowed.join(', ') || 'none'}); the state did not change that way`;
        }
        target = this.#callTarget(state, request.tool);
      }
    } else if (pending !== undefined) {
      note = 'the session moved on before this result came; it changed no state';
    }
    const entered = this.#moveTo(target);
    const result = { ok: true as const, state: this.#state, result: response.body, ...(note ? { note } : {}) };
    return { ...base, toState: this.#state, moved: entered !== null, entered, stored, result };
  }

  snapshot(): FlowSnapshot {
    return {
      state: this.#state,
      variables: { ...this.variables },
      tools: this.listedTools(),
      prompt: this.uiPrompt(),
      artifact_type: this.artifactType(),
    };
  }

  /** A listed tool's definition: the state's own, else the flow's top-level one. */
  #definition(name: string): ToolDefinition | undefined {
    return this.#definitionIn(this.#state, name);
  }

  #definitionIn(stateName: string, name: string): ToolDefinition | undefined {
    return ownValue(ownValue(this.#document.states, stateName)?.tools, name) ?? ownValue(this.#document.tools, name);
  }

  /** Where an accepted call of `name` leads: the state's transition, else a global tool's target. */
  #callTarget(state: FlowState, name: string): string | undefined {
    const own = ownValue(state.transitions?.on_tool_call, name);
    if (own !== undefined || ownValue(state.tools, name)) return own;
    return ownValue(this.#document.settings?.global_tools, name)?.target;
  }

  /** Moves to `target` and enters it; a target that is the current state (or none) is a stay. */
  #moveTo(target: string | undefined): StateEntry | null {
    // A transition back to the same state is a stay: same prompt, same tools, nothing to re-enter.
    if (target === undefined || target === this.#state) return null;
    this.#state = target;
    this.#path.push(target);
    this.#movedToInResponse = target;
    return this.#enter(target);
  }

  /** Applies the state's `on_enter.set` and says what else entering it asks for. */
  #enter(stateName: string): StateEntry {
    const state = ownValue(this.#document.states, stateName);
    const onEnter = state?.on_enter;
    // Rendered with the variables as they were before this entry's own `set`, so the order of
    // its keys does not matter.
    const before = this.variables;
    for (const [variable, value] of Object.entries(onEnter?.set ?? {})) {
      this.#variables.set(variable, typeof value === 'string' ? renderTemplate(value, before) : value);
    }
    if (onEnter?.set) this.#variablesView = null;
    const say = onEnter?.say === undefined ? '' : renderTemplate(onEnter.say, this.variables);
    const endSession = onEnter?.end_session === true;
    return {
      state: stateName,
      say: say.trim() === '' ? null : say,
      endSession,
      respond: state?.respond !== false && !endSession,
      resetContext: state?.context === 'reset',
      interruptible: state?.interruptible !== false,
    };
  }

  #currentState(): FlowState {
    const state = ownValue(this.#document.states, this.#state);
    // Unreachable: the constructor checked every state the runtime can enter.
    if (state === undefined) throw new Error(`flow has no state '${this.#state}'`);
    return state;
  }
}

// Validation guarantees these, but a runtime built from an unvalidated document should fail
// at construction, not in the middle of a call.
function assertStatesExist(document: FlowDocument): void {
  if (ownValue(document.states, document.initial_state) === undefined) {
    throw new Error(`initial_state '${document.initial_state}' is not a state of the flow`);
  }
  for (const [stateName, state] of Object.entries(document.states)) {
    for (const [tool, target] of Object.entries(state.transitions?.on_tool_call ?? {})) {
      if (ownValue(document.states, target) === undefined) {
        throw new Error(`state '${stateName}' moves on '${tool}' to '${target}', which is not a state of the flow`);
      }
    }
  }
}

function contextValueToVariable(value: unknown): VariableValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'object':
      // Objects and arrays are kept as JSON so a prompt can still quote them.
      if (value === null) return undefined;
      try {
        return JSON.stringify(value);
      } catch {
        return undefined; // cyclic: cannot come from a JSON request body
      }
    default:
      return undefined;
  }
}

function httpRequest(
  callNumber: number,
  tool: string,
  http: HttpAction,
  args: Record<string, VariableValue>,
  variables: Readonly<Record<string, VariableValue>>,
): HttpToolRequest {
  return {
    callNumber,
    tool,
    url: http.url,
    method: http.method ?? 'POST',
    headers: { ...(http.headers ?? {}) },
    timeoutMs: http.timeout_ms ?? DEFAULT_HTTP_TIMEOUT_MS,
    arguments: { ...args },
    variables: { ...variables },
  };
}
