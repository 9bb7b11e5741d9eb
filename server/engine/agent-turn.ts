// The agent stage of a voice session: one turn of the model (and of the flow's tool rounds) until
// it answers in words, speaking each sentence as soon as it is complete.
//
//   history + state ─► LLM ─► text ─► sentences ─► SpeechQueue ─► AudioOut
//                          └► tool calls ─► commitToolCall (flow runtime + history + events)
//
// The one invariant: a tool call, its history entries and the runtime's state change are
// committed in one synchronous step, so an interruption lands before or after a call, never
// half-way (the anchors' most common bug: a flow stuck after a barge-in during a transition).
import type { FlowRuntime, ToolCallOutcome } from '../flow/runtime.ts';
import type { ServerEvent, ToolCallSource } from '../protocol/events.ts';
import { isAbortError } from '../providers/retry.ts';
import type { ChatToolCall, LanguageModel, TextToSpeech } from '../providers/types.ts';
import type { AudioOut } from './audio-out.ts';
import type { ConversationHistory } from './conversation-history.ts';
import type { HookEvent } from './hooks.ts';
import { SentenceSplitter } from './sentence-splitter.ts';
import { SpeechQueue } from './speech-queue.ts';
import type { TurnTiming } from './turn-timing.ts';

/** Where a committed call is told: the client's events and the session hooks. */
export interface CommitTarget {
  readonly runtime: FlowRuntime | null;
  readonly history: ConversationHistory;
  send(event: ServerEvent): void;
  hook(event: HookEvent): void;
}

export interface AgentTurnDeps extends CommitTarget {
  readonly llm: LanguageModel;
  readonly tts: TextToSpeech;
  readonly audioOut: AudioOut;
  /** The system prompt of assistant mode (a flow brings its own, per state). */
  readonly assistantPrompt: string;
  /** A sentence could not be synthesized; the turn goes on without it. */
  speechFailed(error: unknown): void;
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
  target.history.addToolResult(call.id, outcome.result);
  target.send({
    type: 'tool_call',
    name: outcome.name,
    arguments: outcome.arguments,
    status: outcome.status,
    reason: outcome.status === 'rejected' ? outcome.reason : null,
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
    // A stay still changes variables, which the UI card may show.
    for (const event of flowStateEvents(runtime)) target.send(event);
    if (outcome.moved) target.hook({ type: 'state_changed', from: outcome.fromState, to: outcome.toState, tool: outcome.name });
  }
  return outcome;
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
    const speech = new SpeechQueue(this.deps.tts, this.deps.audioOut, signal, timing, (error) => this.deps.speechFailed(error));
    runtime?.beginUserTurn();
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
        for await (const chunk of llm.stream({ messages: history.withSystemPrompt(system), tools, signal })) {
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
        if (calls.length === 0) break;
        const outcomes = calls.map((call) => commitToolCall(this.deps, call, 'model', speech));
        // Past the round cap the model was offered no tools; if it called some anyway, stop
        // here instead of asking it again.
        if (outcomes.every((o) => o.status === 'rejected' && o.code === 'round_limit')) break;
      }
      await speech.finished();
    } catch (error) {
      if (signal.aborted || isAbortError(error)) return;
      throw error;
    }
  }
}
