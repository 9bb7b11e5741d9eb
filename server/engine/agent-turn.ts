// The agent stage of a voice session: one turn of the model (and of the flow's tool rounds) until
// it answers in words, speaking each sentence as soon as it is complete.
//
//   history + state ─► LLM ─► text ─► sentences ─► SpeechQueue ─► AudioOut
//                          └► tool calls ─► commitToolCall (flow runtime + history + events)
//
// The one invariant: a tool call, its history entries and the runtime's state change are
// committed in one synchronous step, so an interruption lands before or after a call, never
// half-way (the anchors' most common bug: a flow stuck after a barge-in during a transition).
// An http tool (docs/flows.md) is two such steps: the call (its result's place in the history is
// kept), then its answer with the move it chooses. The request is the session's, not the turn's:
// a barge-in while it is out does not cancel it, and its answer is still committed.
import type { FlowRuntime, StateEntry, ToolCallOutcome, ToolResultOutcome } from '../flow/runtime.ts';
import type { ServerEvent, ToolCallSource } from '../protocol/events.ts';
import { isAbortError } from '../providers/retry.ts';
import type { ChatToolCall, LanguageModel } from '../providers/types.ts';
import type { ConversationHistory } from './conversation-history.ts';
import type { HookEvent } from './hooks.ts';
import type { HttpToolRun } from './http-tools.ts';
import { SentenceSplitter } from './sentence-splitter.ts';
import type { SpeechQueue } from './speech-queue.ts';
import type { TurnTiming } from './turn-timing.ts';

/** Where a committed call is told: the client's events and the session hooks. */
export interface CommitTarget {
  readonly runtime: FlowRuntime | null;
  readonly history: ConversationHistory;
  send(event: ServerEvent): void;
  hook(event: HookEvent): void;
  /** Sends an http tool's request for the session (absent: this server cannot). */
  readonly callHttpTool?: (request: NonNullable<Extract<ToolCallOutcome, { status: 'accepted' }>['http']>) => Promise<HttpToolRun>;
  /** The flow entered a state: the session speaks its line, guards it, ends the call after it. */
  entered?(entry: StateEntry, speech: SpeechQueue | null): void;
  /** An accepted `send_dtmf` tool's keys, for the line. */
  sendDigits?(digits: string): void;
}

/**
 * Said when an http tool failed and the model, told so, answers with nothing: the caller must
 * not be left in silence (docs/flows.md#extended-flow-keys: the call goes on).
 */
export const TOOL_FAILURE_LINE = "Sorry, I couldn't look that up just now. Could we try again?";

/** What an http tool's call tells the model until its answer comes. */
const PENDING_RESULT = { ok: false, pending: true, error: 'the request is still out; its result will follow' };

/** The history place of each http call's result, filled when its answer is committed. */
const pendingResults = new WeakMap<ToolCallOutcome, (result: unknown) => void>();

export interface AgentTurnDeps extends CommitTarget {
  readonly llm: LanguageModel;
  /** The system prompt of assistant mode (a flow brings its own, per state). */
  readonly assistantPrompt: string;
  /** The speech stage for this turn's reply, cancelled with `signal`. */
  openSpeech(signal: AbortSignal, timing: TurnTiming): SpeechQueue;
}

/** `flow_state` and `artifact` for the runtime's current state (none in assistant mode). */
export function flowStateEvents(runtime: FlowRuntime | null): ServerEvent[] {
  if (!runtime) return [];
  const snapshot = runtime.snapshot();
  return [
    { type: 'flow_state', ...snapshot },
    { type: 'artifact', state: snapshot.state, artifact_type: snapshot.artifact_type, prompt: snapshot.prompt },
  ];
}

/**
 * Applies one tool call and commits everything it changes at once: the runtime's move and
 * variables, the tool result in the history, the `tool_call` (and `flow_state`) events, the
 * hooks, and the speech cue. Synchronous on purpose — see the invariant above.
 */
export function commitToolCall(target: CommitTarget, call: ChatToolCall, source: ToolCallSource, speech: SpeechQueue | null): ToolCallOutcome {
  const { runtime } = target;
  let outcome: ToolCallOutcome;
  if (runtime) {
    outcome = runtime.applyToolCall(call.function.name, call.function.arguments);
  } else {
    const reason = 'this is an assistant session: there are no flow tools';
    outcome = { status: 'rejected', name: call.function.name, arguments: call.function.arguments, fromState: '', toState: '', code: 'unlisted_tool', reason, result: { ok: false, error: reason } };
  }
  if (outcome.status === 'accepted' && outcome.http) pendingResults.set(outcome, target.history.reserveToolResult(call.id, PENDING_RESULT));
  else target.history.addToolResult(call.id, outcome.result);
  target.send({
    type: 'tool_call',
    name: outcome.name,
    arguments: outcome.arguments,
    status: outcome.status,
    reason: outcome.status === 'rejected' ? outcome.reason : null,
    ...(outcome.status === 'rejected' ? { code: outcome.code } : {}),
    from_state: outcome.fromState,
    to_state: outcome.toState,
    source,
  });
  target.hook({
    type: 'tool_called',
    name: outcome.name,
    status: outcome.status,
    source,
    state: outcome.fromState,
    arguments: outcome.arguments,
    reason: outcome.status === 'rejected' ? outcome.reason : null,
  });
  if (outcome.status === 'accepted') {
    if (outcome.speechCue && speech) {
      // The user hears the cue, so the transcript shows it; the model already gets it in the tool result.
      speech.say(outcome.speechCue, null);
      target.send({ type: 'transcript', role: 'agent', text: outcome.speechCue, final: true });
    }
    if (outcome.sendDtmf) target.sendDigits?.(outcome.sendDtmf);
    // A stay still changes variables, which the UI card may show.
    for (const event of flowStateEvents(runtime)) target.send(event);
    if (outcome.moved) target.hook({ type: 'state_changed', from: outcome.fromState, to: outcome.toState, tool: outcome.name });
    if (outcome.entered) target.entered?.(outcome.entered, speech);
  }
  return outcome;
}

/**
 * For an accepted http tool's call: sends its request, then commits the answer in one
 * synchronous step (the runtime's move, the result in the history's kept place, the events and
 * hooks, the entered state's line). Null for any other outcome.
 */
export async function finishToolCall(target: CommitTarget, outcome: ToolCallOutcome, source: ToolCallSource, speech: SpeechQueue | null): Promise<ToolResultOutcome | null> {
  const { runtime } = target;
  if (!runtime || outcome.status !== 'accepted' || !outcome.http) return null;
  const request = outcome.http;
  const run: HttpToolRun = target.callHttpTool
    ? await target.callHttpTool(request)
    : { response: { ok: false, error: 'this server cannot call http tools' }, status: null, durationMs: 0 };
  const result = runtime.applyToolResult(request, run.response);
  pendingResults.get(outcome)?.(result.result);
  pendingResults.delete(outcome);
  target.send({
    type: 'tool_result',
    name: result.name,
    url: request.url,
    method: request.method,
    arguments: request.arguments,
    ok: run.response.ok,
    http_status: run.status,
    duration_ms: run.durationMs,
    result: run.response.ok ? run.response.body : null,
    error: run.response.ok ? null : run.response.error,
    from_state: result.fromState,
    to_state: result.toState,
    source,
  });
  if (result.moved || Object.keys(result.stored).length > 0) for (const event of flowStateEvents(runtime)) target.send(event);
  if (result.moved) target.hook({ type: 'state_changed', from: result.fromState, to: result.toState, tool: result.name });
  if (result.entered) target.entered?.(result.entered, speech);
  return result;
}

/**
 * What the model remembers of the states a response entered, once all its calls' results are in
 * the history (nothing may come between a call and its result): `context: reset` forgets what
 * came before, and an `on_enter.say` is remembered as said.
 */
export function rememberEntries(history: ConversationHistory, entries: readonly StateEntry[]): void {
  for (const entry of entries) {
    if (entry.resetContext) history.forget();
    if (entry.say) history.addAssistant(entry.say);
  }
}

export class AgentTurn {
  private readonly controller = new AbortController();

  constructor(
    private readonly deps: AgentTurnDeps,
    readonly timing: TurnTiming,
  ) {}

  /** Cancels the model and the speech in flight; what was committed stays. */
  abort(): void {
    this.controller.abort();
  }

  /**
   * Runs the model until it answers in words (at most the flow's tool rounds), and resolves once
   * the reply's speech is synthesized. An abort resolves quietly; a model failure rejects.
   */
  async run(): Promise<void> {
    const { llm, runtime, history } = this.deps;
    const timing = this.timing;
    const signal = this.controller.signal;
    const speech = this.deps.openSpeech(signal, timing);
    runtime?.beginUserTurn();
    let toolFailed = false;
    try {
      for (;;) {
        runtime?.beginModelResponse();
        const tools = runtime?.toolSchemas() ?? [];
        const system = runtime ? runtime.systemPrompt() : this.deps.assistantPrompt;
        // The reply's sentences are tagged with the message they will become, so a barge-in can
        // rewrite that message to what was heard.
        const messageIndex = history.nextIndex;
        const splitter = new SentenceSplitter();
        const calls: ChatToolCall[] = [];
        let text = '';
        timing.modelRequested();
        for await (const chunk of llm.stream({ messages: history.withSystemPrompt(system), tools, signal, ...runtime?.modelOptions() })) {
          timing.modelAnswered();
          if (chunk.type === 'text') {
            text += chunk.text;
            for (const sentence of splitter.push(chunk.text)) speech.say(sentence, messageIndex);
          } else if (chunk.type === 'tool_call') {
            calls.push(chunk.call);
          }
        }
        signal.throwIfAborted();
        for (const sentence of splitter.flush()) speech.say(sentence, messageIndex);
        // The model's message and every call's outcome enter the history in one synchronous
        // step with the runtime's state change: nothing can interrupt in between.
        history.addAssistant(text, calls);
        if (text.trim()) this.deps.send({ type: 'transcript', role: 'agent', text: text.trim(), final: true });
        if (calls.length === 0 && !text.trim() && toolFailed) {
          speech.say(TOOL_FAILURE_LINE, null);
          history.addAssistant(TOOL_FAILURE_LINE);
          this.deps.send({ type: 'transcript', role: 'agent', text: TOOL_FAILURE_LINE, final: true });
        }
        if (calls.length === 0) break;
        toolFailed = false;
        const outcomes: ToolCallOutcome[] = [];
        const entries: StateEntry[] = [];
        // In order; an http call's answer is awaited before the next call, whose acceptance may
        // depend on the move it made. Every call gets its result even after an abort, so the
        // history stays what the model APIs accept.
        for (const call of calls) {
          const outcome = commitToolCall(this.deps, call, 'model', speech);
          outcomes.push(outcome);
          if (outcome.status === 'accepted' && outcome.entered) entries.push(outcome.entered);
          const answered = await finishToolCall(this.deps, outcome, 'model', speech);
          if (answered?.entered) entries.push(answered.entered);
          if (answered && !answered.result.ok) toolFailed = true;
        }
        rememberEntries(history, entries);
        signal.throwIfAborted();
        // Past the round cap the model was offered no tools; if it called some anyway, stop
        // here instead of asking it again.
        if (outcomes.every((o) => o.status === 'rejected' && o.code === 'round_limit')) break;
        // A state entered with `respond: false` (or one that ends the call) waits for the caller.
        if (entries.length > 0 && !entries[entries.length - 1]!.respond) break;
      }
      await speech.finished();
    } catch (error) {
      if (signal.aborted || isAbortError(error)) return;
      throw error;
    }
  }
}
