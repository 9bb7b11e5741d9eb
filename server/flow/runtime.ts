// The state machine one session runs: which prompt and tools the model sees, and what a tool
// call does to the state and the variables. Pure and deterministic, so the studio can replay a
// flow in the browser exactly as the engine runs it.
// A little over 400 lines, one idea: one tool call's effect on the state, kept in one place so
// the engine and the studio cannot disagree about it.
//
// The extended keys add what the runtime decides without the model (on-entry actions, global tools,
// result transitions); what takes time or the network (an http tool's request, speaking, ending
// the call, idle timers) it describes, and the engine does (engine/agent-turn.ts).
//
// This file is the machine's state (where the session is, the path, the turn's rounds) and the
// order of each step; what a step decides lives beside it, by idea: whether a call may be
// applied (tool-call-rules.ts), what entering a state does (state-entry.ts), an http tool's
// request and answer (http-tool-calls.ts), what a keypad key does (keypad.ts), the variables (runtime-variables.ts), and what the
// document says about a state's tools (document-lookups.ts).
// Just over 400 lines: the state machine's public surface is one class; its rules live in the
// files named above.

import { MAX_TOOL_ROUNDS_PER_TURN } from './types.ts';
import type { FlowDocument, FlowState, ToolDefinition } from './types.ts';
import { renderTemplate } from './template.ts';
import { ownValue } from './own-keys.ts';
import { parseArguments, type ToolArguments } from './tool-arguments.ts';
import type { VariableValue } from './template.ts';
import { toolSchema, type OpenAITool } from './tool-schemas.ts';
import { assertStatesExist, callTarget, listedTools, toolDefinition } from './document-lookups.ts';
import { answerTarget, httpRequest, storedFields } from './http-tool-calls.ts';
import { FlowVariables } from './runtime-variables.ts';
import { enterState } from './state-entry.ts';
import { checkToolCall } from './tool-call-rules.ts';
import { KeypadInput, TRANSFER_FAILED_MOVE, type KeypadSession } from './keypad.ts';
import type {
  FlowRuntimeOptions,
  KeypadOutcome,
  RuntimeMove,
  FlowSnapshot,
  HttpToolRequest,
  HttpToolResponse,
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
  KeyPress,
  KeypadOutcome,
  RuntimeMove,
  TransferAction,
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
  readonly #variables: FlowVariables;
  #roundsUsed = 0;
  #callsInResponse = 0;
  #movedToInResponse: string | null = null;
  #callNumber = 0;
  /** Http calls waiting for their answer: the state they were made in, and how many moves there were then. */
  readonly #pendingHttp = new Map<number, { state: string; moves: number }>();
  readonly #initialEntry: StateEntry;
  /** The number the caller has begun typing in this state; every move forgets it. */
  readonly #keypad = new KeypadInput();
  /** What the keypad reads and changes of the session. */
  readonly #keypadSession: KeypadSession = {
    state: () => this.#state,
    dtmf: () => this.#currentState().dtmf,
    store: (variable, value) => this.#variables.set(variable, value),
    move: (target) => this.#moveTo(target),
  };

  constructor(document: FlowDocument, options: FlowRuntimeOptions = {}) {
    this.#document = document;
    assertStatesExist(document);
    this.#variables = new FlowVariables(options.context);
    this.#state = document.initial_state;
    this.#path.push(document.initial_state);
    this.#initialEntry = enterState(document, document.initial_state, this.#variables);
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
    return this.#variables.current;
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
    return listedTools(this.#document, this.#currentState());
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

  /**
   * The current state's turn-taking (docs/flows.md#turn-taking): each key the state's `turn` sets,
   * else the flow's `settings.turn`, else the state's `endpointing_ms` for the base wait; a key
   * none sets is absent (the server's default). And what the state's tools and keypad expect the
   * caller to answer, which shortens or lengthens the wait after their words.
   */
  turnOptions(): {
    minInterruptionWords?: number;
    backchannels?: 'ignore' | 'interrupt';
    endpointingMs?: number;
    maxEndpointingMs?: number;
    hints: { yesNo: boolean; enumValues: string[]; number: boolean; collectingDigits: boolean };
  } {
    const state = this.#currentState();
    const own = state.turn ?? {};
    const flow = this.#document.settings?.turn ?? {};
    const endpointingMs = own.endpointing_ms ?? state.endpointing_ms ?? flow.endpointing_ms;
    const maxEndpointingMs = own.max_endpointing_ms ?? flow.max_endpointing_ms;
    const minInterruptionWords = own.min_interruption_words ?? flow.min_interruption_words;
    const backchannels = own.backchannels ?? flow.backchannels;
    const hints = { yesNo: false, enumValues: [] as string[], number: false, collectingDigits: state.dtmf?.collect !== undefined };
    for (const name of this.listedTools()) {
      for (const parameter of Object.values(this.#definition(name)?.parameters ?? {})) {
        if (parameter.type === 'boolean') hints.yesNo = true;
        if (parameter.type === 'number' || parameter.type === 'integer') hints.number = true;
        for (const value of parameter.enum ?? []) if (typeof value === 'string') hints.enumValues.push(value);
      }
    }
    return {
      ...(minInterruptionWords !== undefined ? { minInterruptionWords } : {}),
      ...(backchannels !== undefined ? { backchannels } : {}),
      ...(endpointingMs !== undefined ? { endpointingMs } : {}),
      ...(maxEndpointingMs !== undefined ? { maxEndpointingMs } : {}),
      hints,
    };
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
    const definition = this.#definition(name);
    const check = checkToolCall({
      name,
      fromState,
      toolRoundsLeft: this.toolRoundsLeft,
      movedToInResponse: this.#movedToInResponse,
      listed: this.listedTools(),
      parsed,
      definition,
    });
    if (!check.ok) {
      const { code, reason } = check;
      return { status: 'rejected', name, arguments: parsed.given, fromState, toState: fromState, code, reason, result: { ok: false, error: reason } };
    }

    for (const [parameter, value] of Object.entries(check.values)) this.#variables.set(parameter, value);

    const cue = definition?.speech_cue;
    const rendered = cue === undefined ? '' : renderTemplate(cue, this.variables);
    const speechCue = rendered.trim() === '' ? null : rendered;

    const sendDtmf = definition?.send_dtmf !== undefined ? { sendDtmf: definition.send_dtmf } : {};
    if (definition?.http) {
      // The move waits for the answer: the result may choose it (on_tool_result).
      const callNumber = ++this.#callNumber;
      this.#pendingHttp.set(callNumber, { state: fromState, moves: this.#path.length });
      return {
        status: 'accepted',
        name,
        arguments: check.values,
        fromState,
        toState: fromState,
        moved: false,
        speechCue,
        result: speechCue === null ? { ok: true, state: fromState } : { ok: true, state: fromState, spoken: speechCue },
        http: httpRequest(callNumber, name, definition.http, check.values, this.variables),
      };
    }

    const entered = this.#moveTo(callTarget(this.#document, this.#currentState(), name));
    return {
      status: 'accepted',
      name,
      arguments: check.values,
      fromState,
      toState: this.#state,
      moved: entered !== null,
      speechCue,
      result: speechCue === null ? { ok: true, state: this.#state } : { ok: true, state: this.#state, spoken: speechCue },
      ...(entered ? { entered } : {}),
      ...sendDtmf,
    };
  }

  /**
   * Keys the caller pressed (0-9, * and #), applied one after the other: a key of the state's
   * `dtmf.keys` moves at once, the digits of `dtmf.collect` are gathered until the number is
   * complete (stored, then the move to `then`), and a key the state does not take is ignored.
   * After a move the next keys count in the state entered. Committed at once, like a tool call:
   * an interruption never undoes it, and a model response under way when the keys moved the
   * state has its later calls rejected (the state changed). The keys are the caller's turn:
   * `beginUserTurn` before the model answers it. `keypadTurns` (keypad.ts) gives the caller turns to add to
   * the model's history.
   */
  pressKeys(digits: string): KeypadOutcome {
    return this.#keypad.press(this.#keypadSession, digits);
  }

  /**
   * The engine's timer ran out after the caller's last key (`collectTimeoutMs`): a number with at
   * least one digit is complete, as if the finish key had been pressed. Null when no number was
   * begun (nothing to finish; the caller may still speak or press).
   */
  collectTimedOut(): KeypadOutcome | null {
    return this.#keypad.timedOut(this.#keypadSession);
  }

  /** How long to wait for the caller's next key before `collectTimedOut()`: only while a number is begun, else null. */
  collectTimeoutMs(): number | null {
    return this.#keypad.timeoutMs(this.#currentState().dtmf);
  }

  /**
   * The current state's transfer failed (nobody answered, busy, the carrier refused): the session
   * moves to its `on_failed` state. Null when the state has no transfer or no `on_failed` (the
   * engine ends the call then).
   */
  transferFailed(): RuntimeMove | null {
    const onFailed = this.#currentState().on_enter?.transfer?.on_failed;
    if (onFailed === undefined) return null;
    const fromState = this.#state;
    const entered = this.#moveTo(onFailed);
    return { fromState, toState: this.#state, via: TRANSFER_FAILED_MOVE, entered };
  }

  /** `settings.voicemail` with its message rendered now; null when the flow sets none. */
  voicemail(): { detect: boolean; message: string | null } | null {
    const voicemail = this.#document.settings?.voicemail;
    if (!voicemail) return null;
    const message = voicemail.message === undefined ? '' : renderTemplate(voicemail.message, this.variables);
    return { detect: voicemail.detect, message: message.trim() === '' ? null : message };
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

    const definition = pending ? toolDefinition(this.#document, pending.state, request.tool) : undefined;
    const stored = storedFields(definition, response.body);
    for (const [variable, value] of Object.entries(stored)) this.#variables.set(variable, value);

    let note: string | undefined;
    let target: string | undefined;
    const stillThere = pending !== undefined && pending.state === fromState && pending.moves === this.#path.length;
    if (stillThere) {
      const state = this.#currentState();
      ({ target, note } = answerTarget(state, request.tool, response.body, callTarget(this.#document, state, request.tool)));
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
    return toolDefinition(this.#document, this.#state, name);
  }

  /** Moves to `target` and enters it; a target that is the current state (or none) is a stay. */
  #moveTo(target: string | undefined): StateEntry | null {
    // A transition back to the same state is a stay: same prompt, same tools, nothing to re-enter.
    if (target === undefined || target === this.#state) return null;
    this.#keypad.forget();
    this.#state = target;
    this.#path.push(target);
    this.#movedToInResponse = target;
    return enterState(this.#document, target, this.#variables);
  }

  #currentState(): FlowState {
    const state = ownValue(this.#document.states, this.#state);
    // Unreachable: the constructor checked every state the runtime can enter.
    if (state === undefined) throw new Error(`flow has no state '${this.#state}'`);
    return state;
  }
}
