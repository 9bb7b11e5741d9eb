// The flow runtime as it was before the extended keys (commit 449b257), kept unchanged as the
// reference a spec-only document must behave identically under
// (test/flow/spec-documents-keep-their-meaning). Not product code: never import it from server/.
// The state machine one session runs: which prompt and tools the model sees, and what a tool call
// does to the state and the variables. Pure and deterministic, so the studio can replay a flow in
// the browser exactly as the engine runs it.

import { MAX_TOOL_ROUNDS_PER_TURN } from '../../server/flow/types.ts';
import type { FlowDocument, FlowState, ParameterType, ToolDefinition } from '../../server/flow/types.ts';
import { renderTemplate } from '../../server/flow/template.ts';
import { ownValue, setOwn } from '../../server/flow/own-keys.ts';
import { checkArguments, parseArguments, type ToolArguments } from '../../server/flow/tool-arguments.ts';
import type { VariableValue } from '../../server/flow/template.ts';

export type { VariableValue } from '../../server/flow/template.ts';

/** A tool as the OpenAI chat-completions API takes it in `tools`. */
export interface OpenAITool {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: {
      type: 'object';
      properties: Record<string, { type: ParameterType }>;
      required: string[];
      additionalProperties: false;
    };
  };
}

export type RejectionCode =
  | 'round_limit'
  | 'state_changed'
  | 'unlisted_tool'
  | 'invalid_arguments'
  | 'missing_argument'
  | 'mistyped_argument';

export interface AcceptedToolCall {
  status: 'accepted';
  name: string;
  /** The declared arguments after coercion; these are what was stored as variables. */
  arguments: Record<string, VariableValue>;
  fromState: string;
  toState: string;
  moved: boolean;
  /** The tool's speech cue rendered with the new arguments; null when there is nothing to say. */
  speechCue: string | null;
  /** Sent back to the model as the tool result. */
  result: { ok: true; state: string; spoken?: string };
}

export interface RejectedToolCall {
  status: 'rejected';
  name: string;
  /** What the model sent: the parsed value when it parsed, else the raw text. */
  arguments: unknown;
  fromState: string;
  toState: string;
  code: RejectionCode;
  reason: string;
  /** Sent back to the model as the tool result, so it can correct itself. */
  result: { ok: false; error: string };
}

export type ToolCallOutcome = AcceptedToolCall | RejectedToolCall;

/** What a `flow_state` event carries. */
export interface FlowSnapshot {
  state: string;
  variables: Record<string, VariableValue>;
  tools: string[];
  prompt: string;
  artifact_type: string;
}

export interface FlowRuntimeOptions {
  /** The session's start `context`: pre-fills variables before the first prompt renders. */
  context?: Record<string, unknown>;
}

export type { ToolArguments } from '../../server/flow/tool-arguments.ts';

const DEFAULT_ARTIFACT_TYPE = 'card';

/**
 * Runs one session's flow. A committed tool call is final: there is deliberately no undo, so a
 * user interrupting the agent (barge-in) never rolls the state or the variables back. The engine
 * relies on this; a flow that rolled back on interruption would get stuck half-way through a
 * transition whose speech cue the user already heard.
 *
 * The document must be one the validator accepted; it is read, never copied, so do not mutate it.
 */
export class SpecFlowRuntime {
  readonly #document: FlowDocument;
  #state: string;
  readonly #path: string[] = [];
  readonly #variables = new Map<string, VariableValue>();
  #variablesView: Readonly<Record<string, VariableValue>> | null = null;
  #roundsUsed = 0;
  #callsInResponse = 0;
  #movedToInResponse: string | null = null;

  constructor(document: FlowDocument, options: FlowRuntimeOptions = {}) {
    this.#document = document;
    assertStatesExist(document);
    for (const [name, value] of Object.entries(options.context ?? {})) {
      const variable = contextValueToVariable(value);
      if (variable !== undefined) this.#variables.set(name, variable);
    }
    this.#state = document.initial_state;
    this.#path.push(document.initial_state);
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

  /** The tools the current state lets the model call, duplicates removed, in listed order. */
  listedTools(): string[] {
    return [...new Set(this.#currentState().agent.tools ?? [])];
  }

  /** Exactly the current state's tools; none once the turn's rounds are spent, so the model must answer in words. */
  toolSchemas(): OpenAITool[] {
    if (this.toolRoundsLeft === 0) return [];
    const state = this.#currentState();
    return this.listedTools().map((name) => toolSchema(name, ownValue(state.tools, name)));
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
    const checked = checkArguments(ownValue(state.tools, name)?.parameters ?? {}, parsed.value);
    if (checked.problems.length > 0) {
      // A missing argument is reported as the code when there is one: supplying it is the
      // first thing the model has to fix. The reason lists every problem either way.
      const code = checked.problems.some((p) => p.kind === 'missing') ? 'missing_argument' : 'mistyped_argument';
      const details = checked.problems.map((p) => p.message).join('; ');
      return reject(code, `invalid arguments for tool '${name}': ${details}`);
    }

    for (const [parameter, value] of Object.entries(checked.values)) this.#variables.set(parameter, value);
    this.#variablesView = null;

    const target = ownValue(state.transitions?.on_tool_call, name);
    // A transition back to the same state is a stay: same prompt, same tools, nothing to re-enter.
    const moved = target !== undefined && target !== fromState;
    if (moved) {
      this.#state = target;
      this.#path.push(target);
      this.#movedToInResponse = target;
    }

    const cue = ownValue(state.tools, name)?.speech_cue;
    const rendered = cue === undefined ? '' : renderTemplate(cue, this.variables);
    const speechCue = rendered.trim() === '' ? null : rendered;
    return {
      status: 'accepted',
      name,
      arguments: checked.values,
      fromState,
      toState: this.#state,
      moved,
      speechCue,
      result: speechCue === null ? { ok: true, state: this.#state } : { ok: true, state: this.#state, spoken: speechCue },
    };
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

function toolSchema(name: string, definition: ToolDefinition | undefined): OpenAITool {
  const properties: Record<string, { type: ParameterType }> = {};
  const required: string[] = [];
  for (const [parameter, declared] of Object.entries(definition?.parameters ?? {})) {
    setOwn(properties, parameter, { type: declared.type });
    if (declared.required === true) required.push(parameter);
  }
  return {
    type: 'function',
    function: {
      name,
      description: definition?.description ?? '',
      parameters: { type: 'object', properties, required, additionalProperties: false },
    },
  };
}
