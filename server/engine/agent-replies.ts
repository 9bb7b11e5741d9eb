// The agent stage: the caller's turns in, the agent's replies out. It keeps which agent turn is
// the current one (a barge-in, a typed turn or the end takes it away and cancels it), runs the
// greeting and each answer (agent-turn.ts), applies the studio's simulated tool calls, and says
// the fallback line when a provider failed mid-turn. Speech goes to the speech stage
// (speech-queue.ts) and on to audio out; every reply is bracketed by beginReply/endReply so
// audio out knows when the agent has fallen silent.
import type { FlowRuntime } from '../flow/runtime.ts';
import type { ChatToolCall, LanguageModel, TextToSpeech } from '../providers/types.ts';
import { AgentTurn, rememberEntries, type CommitTarget } from './agent-turn.ts';
import type { AudioOut } from './audio-out.ts';
import type { AgentQuietFrame, CallerTurnFrame, CallerWordsFrame, ErrorFrame, KeypadAnswerFrame, StageOutput, WarningFrame } from './frames.ts';
import { applySimulatedToolCall } from './simulated-tool-call.ts';
import { SpeechQueue } from './speech-queue.ts';
import { metricsReport, TurnTiming } from './turn-timing.ts';

export const FALLBACK_LINE = "Sorry, I'm having trouble right now. Could you say that again?";

export interface AgentRepliesOptions {
  readonly llm: LanguageModel | null;
  readonly tts: TextToSpeech;
  /** The system prompt of assistant mode (a flow brings its own, per state). */
  readonly assistantPrompt: string;
  readonly audioOut: AudioOut;
  /** Where a committed tool call goes: the flow runtime, the history, the client and the hooks. */
  readonly commit: CommitTarget;
  /** Aborted when the session ends. */
  readonly signal: AbortSignal;
  /** The session's next turn number (typed and spoken turns share the count). */
  nextTurnNumber(): number;
}

export type AgentRepliesOutput = AgentQuietFrame | ErrorFrame | WarningFrame;

export class AgentReplies {
  /** The agent turn in flight; a barge-in, a typed turn or the end cancels it. */
  #turn: AgentTurn | null = null;
  #simulatedCalls = 0;

  constructor(
    private readonly options: AgentRepliesOptions,
    private readonly out: StageOutput<AgentRepliesOutput>,
  ) {}

  /** The timing of the turn in flight: its first audio frame out completes its metrics. */
  get currentTiming(): TurnTiming | null {
    return this.#turn?.timing ?? null;
  }

  get turnInFlight(): boolean {
    return this.#turn !== null;
  }

  /** The caller's words: shown, remembered, and answered (caller_words only remembered). */
  push(frame: CallerTurnFrame | CallerWordsFrame): void {
    const { history } = this.options.commit;
    if (frame.type === 'caller_words') {
      history.addUser(frame.text);
      return;
    }
    this.out.send({ type: 'transcript', role: 'user', text: frame.text, final: true });
    history.addUser(frame.text);
    void this.run(frame.text, frame.timing);
  }

  /** The agent speaks first. */
  greet(): void {
    void this.run(null, new TurnTiming(this.options.nextTurnNumber(), 'greeting'));
  }

  /**
   * The turn in flight, no longer the current one: the interrupt handler (barge-in.ts) cancels
   * it and reports what was heard.
   */
  takeTurn(): AgentTurn | null {
    const turn = this.#turn;
    this.#turn = null;
    return turn;
  }

  /**
   * A tool call the flow's owner made in the studio, applied as if the model had made it; its cue
   * and the entered state's line are spoken. The model does not run after it.
   */
  simulateToolCall(runtime: FlowRuntime, name: string, args: Record<string, unknown>): void {
    const call: ChatToolCall = { id: `sim_${++this.#simulatedCalls}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
    const timing = new TurnTiming(this.options.nextTurnNumber(), 'simulated');
    const speech = this.openSpeech(this.options.signal, timing);
    const { audioOut } = this.options;
    audioOut.beginReply();
    void applySimulatedToolCall(this.options.commit, runtime, call, speech).finally(() => {
      audioOut.endReply();
      this.out.push({ type: 'agent_quiet' });
    });
  }

  /**
   * The caller's keys moved the flow (or were keys the state does not take): the entered states'
   * lines are said, in order, then the model answers when the frame says so. The keys are in the
   * history already ("The caller pressed 1"), so the model answers them as it answers words.
   */
  answerKeypad(frame: KeypadAnswerFrame): void {
    const { audioOut, signal, commit } = this.options;
    if (signal.aborted) return;
    if (frame.entries.length === 0) {
      if (frame.respond) void this.run(null, new TurnTiming(this.options.nextTurnNumber(), 'typed'));
      return;
    }
    const speech = this.openSpeech(signal, null);
    audioOut.beginReply();
    for (const entry of frame.entries) commit.entered?.(entry, speech);
    rememberEntries(commit.history, frame.entries);
    void speech.finished().finally(() => {
      audioOut.endReply();
      if (frame.respond && !signal.aborted && !this.#turn) void this.run(null, new TurnTiming(this.options.nextTurnNumber(), 'typed'));
      else this.out.push({ type: 'agent_quiet' });
    });
  }

  /** A provider failed mid-turn: the caller hears that something went wrong, not silence. */
  sayFallback(): void {
    const { tts, audioOut, signal } = this.options;
    const speech = new SpeechQueue(tts, audioOut, signal, null, () => undefined);
    audioOut.beginReply();
    speech.say(FALLBACK_LINE, null);
    void speech.finished().finally(() => {
      if (!this.#turn) audioOut.endReply();
    });
  }

  /** The speech stage of one reply: a sentence that cannot be synthesized is reported and skipped. */
  openSpeech(signal: AbortSignal, timing: TurnTiming | null): SpeechQueue {
    return new SpeechQueue(this.options.tts, this.options.audioOut, signal, timing, (error) => this.out.push({ type: 'error', code: 'tts_failed', error }));
  }

  /** Runs one agent turn as the current one, until it ends or is interrupted. */
  private async run(userText: string | null, timing: TurnTiming): Promise<void> {
    const { llm, audioOut, signal } = this.options;
    if (signal.aborted) return;
    if (!llm) {
      if (userText !== null) this.out.push({ type: 'warning', code: 'llm_unavailable' });
      return;
    }
    const turn = new AgentTurn(
      { ...this.options.commit, llm, assistantPrompt: this.options.assistantPrompt, openSpeech: (turnSignal, turnTiming) => this.openSpeech(turnSignal, turnTiming) },
      timing,
    );
    this.#turn = turn;
    audioOut.beginReply();
    try {
      await turn.run();
    } catch (error) {
      this.out.push({ type: 'error', code: 'llm_failed', error });
    } finally {
      if (this.#turn === turn) {
        // A turn that spoke already reported at its first audio frame; one that did not reports now.
        const report = metricsReport(timing);
        if (report) this.out.send(report);
        this.#turn = null;
        audioOut.endReply();
        this.out.push({ type: 'agent_quiet' });
      }
    }
  }
}
