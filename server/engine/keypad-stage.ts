// The keypad stage: the caller's keys in (a phone's DTMF, a client's `dtmf` message), the flow's
// keypad moves out. A key is a caller turn like a spoken one: it stops the agent, it is committed
// on the flow runtime at once (a key of the state's `dtmf.keys` moves as a declared transition
// does; a number is collected into its variable), it is on the timeline as a `dtmf` event and in
// the model's history ("The caller pressed 1"), and the states it entered speak their lines and,
// when they ask for it, the model answers. A number being collected finishes on its own after the
// state's `timeout_ms` without a key.
import type { FlowRuntime, KeypadOutcome } from '../flow/runtime.ts';
import { keypadTurns } from '../flow/keypad.ts';
import type { ConversationHistory } from './conversation-history.ts';
import type { InterruptFrame, KeypadAnswerFrame, KeypadFrame, StageOutput } from './frames.ts';
import type { HookEvent } from './hooks.ts';
import { flowStateEvents } from './agent-turn.ts';

export type KeypadOutput = InterruptFrame | KeypadAnswerFrame;

export class KeypadStage {
  #collectTimer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    private readonly runtime: FlowRuntime | null,
    private readonly history: ConversationHistory,
    private readonly hook: (event: HookEvent) => void,
    private readonly out: StageOutput<KeypadOutput>,
  ) {}

  push(frame: KeypadFrame): void {
    if (this.#closed) return;
    this.out.push({ type: 'interrupt' });
    if (!this.runtime) {
      // An assistant session has no keypad moves: the model hears the keys, as a turn.
      this.out.send({ type: 'dtmf', digits: frame.digits, source: 'caller', moves: [] });
      this.history.addUser(`The caller pressed ${frame.digits.split('').join(', ')}`);
      this.out.push({ type: 'keypad_answer', entries: [], respond: true });
      return;
    }
    this.#apply(frame.digits, this.runtime.pressKeys(frame.digits));
  }

  close(): void {
    this.#closed = true;
    this.#clearTimer();
  }

  #apply(digits: string, outcome: KeypadOutcome): void {
    this.#clearTimer();
    const moves = outcome.moves.map((m) => ({ from_state: m.fromState, to_state: m.toState, via: m.via }));
    // A number the timeout finished has no key of its own; its move is still on the timeline.
    if (digits !== '' || moves.length > 0) this.out.send({ type: 'dtmf', digits, source: 'caller', moves });
    for (const move of outcome.moves) this.hook({ type: 'state_changed', from: move.fromState, to: move.toState, tool: move.via });
    if (outcome.moves.length > 0 || Object.keys(outcome.stored).length > 0) for (const event of flowStateEvents(this.runtime)) this.out.send(event);
    for (const turn of keypadTurns(outcome)) this.history.addUser(turn);

    const entries = outcome.moves.flatMap((move) => (move.entered ? [move.entered] : []));
    const last = entries[entries.length - 1];
    const ignoredOnly = outcome.moves.length === 0 && outcome.presses.some((p) => p.outcome === 'ignored');
    const respond = last ? last.respond : ignoredOnly;
    if (entries.length > 0 || respond) this.out.push({ type: 'keypad_answer', entries, respond });

    const wait = outcome.collectTimeoutMs;
    if (wait !== null) {
      this.#collectTimer = setTimeout(() => {
        this.#collectTimer = null;
        if (this.#closed || !this.runtime) return;
        const finished = this.runtime.collectTimedOut();
        if (finished) this.#apply('', finished);
      }, wait);
    }
  }

  #clearTimer(): void {
    if (this.#collectTimer) clearTimeout(this.#collectTimer);
    this.#collectTimer = null;
  }
}
