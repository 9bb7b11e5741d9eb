// What a flow's states and settings ask of a session's speech (docs/flows.md), beside the session
// that hosts them: the line a state says on entering, barge-in off while an `interruptible:
// false` state's entry plays, hanging up after a state that ends the call has been heard, and
// `settings.idle` reprompts. The assembly (session-pipeline.ts) tells it what happens (entries,
// activity, the agent falling silent); it asks for speech and for the end.
import type { FlowRuntime, StateEntry, TransferAction } from '../flow/runtime.ts';
import type { ServerEvent } from '../protocol/events.ts';
import { rememberEntries } from './agent-turn.ts';
import type { AudioOut } from './audio-out.ts';
import type { ConversationHistory } from './conversation-history.ts';
import type { SpeechQueue } from './speech-queue.ts';

export interface FlowSpeechHost {
  readonly audioOut: AudioOut;
  readonly history: ConversationHistory;
  send(event: ServerEvent): void;
  /** A queue for lines said outside a turn, living as long as the session. */
  lineSpeech(): SpeechQueue;
  /** An agent turn is in flight. */
  turnInFlight(): boolean;
  isEnded(): boolean;
  end(reason: string): void;
  /** A state's `on_enter.transfer`, once its line has been heard. */
  transfer(action: TransferAction): void;
  /** When the caller last spoke or the client last sent a message (performance.now). */
  lastActivityAt(): number;
}

export class FlowSpeechRules {
  /** A state with `interruptible: false` is speaking what it says on entering: barge-in is off. */
  #protectedSpeech = false;
  /** A state with `on_enter.end_session` was entered: the call ends once its speech has played. */
  #endAfterSpeech = false;
  /** A state with `on_enter.transfer` was entered: the caller is handed on once its line has played. */
  #transferAfterSpeech: TransferAction | null = null;
  /** Reprompts said since the caller last did anything (`settings.idle`). */
  #reprompts = 0;
  #repromptTimer: NodeJS.Timeout | null = null;
  /** When the agent last fell silent (performance.now), 0 before it has spoken. */
  #quietSince = 0;

  constructor(
    private readonly host: FlowSpeechHost,
    private readonly runtime: FlowRuntime | null,
  ) {}

  /** The initial state's entry, when the session starts, before the agent's first words. */
  enterInitialState(entry: StateEntry): void {
    if (!entry.say) {
      this.entered(entry, null);
      this.afterAgentSpoke();
      return;
    }
    const speech = this.host.lineSpeech();
    this.host.audioOut.beginReply();
    this.entered(entry, speech);
    rememberEntries(this.host.history, [entry]);
    void speech.finished().finally(() => {
      if (!this.host.turnInFlight()) this.host.audioOut.endReply();
      this.afterAgentSpoke();
    });
  }

  /** Speaks the entered state's line, guards it from barge-in, and ends the call after it if asked. */
  entered(entry: StateEntry, speech: SpeechQueue | null): void {
    if (!entry.interruptible) this.#protectedSpeech = true;
    if (entry.say && speech) {
      speech.say(entry.say, null);
      this.host.send({ type: 'transcript', role: 'agent', text: entry.say, final: true });
    }
    if (entry.endSession) this.#endAfterSpeech = true;
    if (entry.transfer) this.#transferAfterSpeech = entry.transfer;
  }

  /** Call when a turn ends or the agent falls silent: once nothing thinks or plays, barge-in comes back and a call the flow ended ends. */
  afterAgentSpoke(): void {
    if (this.host.isEnded() || this.host.turnInFlight() || this.host.audioOut.isBusy) return;
    this.#quietSince = performance.now();
    this.#protectedSpeech = false;
    const transfer = this.#transferAfterSpeech;
    this.#transferAfterSpeech = null;
    if (transfer) this.host.transfer(transfer);
    else if (this.#endAfterSpeech) this.host.end('flow_ended');
  }

  /**
   * While a state's `interruptible: false` line plays, barge-in is off: the caller speech gate
   * (caller-speech-gate.ts) does not let a turn begun now through.
   */
  get guardsCallerSpeech(): boolean {
    return this.#protectedSpeech;
  }

  /** The caller (or the client) did something: the reprompts start over. */
  noteActivity(): void {
    this.#reprompts = 0;
  }

  /**
   * `settings.idle`: after `after_secs` of the caller's silence the agent says the reprompt, and
   * again after each further `after_secs`, up to `max_reprompts`; one more silence ends the call
   * (`idle`). The silence is the caller's and the agent's both: it counts from the caller's last
   * activity (as the server's idle limit does) or from when the agent fell silent, whichever is
   * later, so a long line (or one that played slowly) is never followed at once by "are you still
   * there?". While the agent thinks or speaks, the check waits.
   */
  watchIdle(): void {
    const idle = this.runtime?.idle();
    if (!idle || this.host.isEnded()) return;
    const check = () => {
      if (this.host.isEnded()) return;
      const due = Math.max(this.host.lastActivityAt() + idle.afterMs * (this.#reprompts + 1), this.#quietSince + idle.afterMs);
      const now = performance.now();
      if (now < due || this.host.turnInFlight() || this.host.audioOut.isBusy) {
        this.#repromptTimer = setTimeout(check, Math.max(50, due - now));
        return;
      }
      if (this.#reprompts >= idle.maxReprompts) {
        this.host.end('idle');
        return;
      }
      this.#reprompts += 1;
      const line = this.runtime?.idle()?.reprompt;
      if (line) void this.sayLine(line);
      this.#repromptTimer = setTimeout(check, idle.afterMs);
    };
    this.#repromptTimer = setTimeout(check, idle.afterMs);
  }

  stop(): void {
    if (this.#repromptTimer) clearTimeout(this.#repromptTimer);
  }

  /** A line said outside a turn (a reprompt, a warm transfer's hold line): heard, shown, and remembered as said. */
  sayLine(line: string): Promise<void> {
    const speech = this.host.lineSpeech();
    this.host.audioOut.beginReply();
    speech.say(line, null);
    this.host.send({ type: 'transcript', role: 'agent', text: line, final: true });
    this.host.history.addAssistant(line);
    return speech.finished().finally(() => {
      if (!this.host.turnInFlight()) this.host.audioOut.endReply();
    });
  }
}
