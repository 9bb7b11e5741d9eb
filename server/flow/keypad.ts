// The caller's phone keypad in a state (its `dtmf` key): what one key does, the names its moves
// go by on the graph, in coverage and in the engine's state_changed hook, and the caller turns
// the model is told. The runtime (runtime.ts) applies the decisions to the session.
//
// The rule for a state with both `keys` and `collect`: a key listed in `keys` moves at once only
// while nothing has been collected; once the caller has begun a number, every key is part of it
// (a "1" inside an account number is not the menu's 1), until the finish key, max_digits, or the
// timeout with at least one digit.
//
// The runtime holds one KeypadInput (the number begun so far) and lends it the session through
// KeypadSession: the current state, storing a variable, and the move, which also forgets the
// number (a number belongs to the state it was begun in).
import { setOwn } from './own-keys.ts';
import type { KeyPress, KeypadOutcome, RuntimeMove, StateEntry } from './runtime-types.ts';
import type { VariableValue } from './template.ts';
import type { StateDtmf } from './types.ts';

/** Keys a caller presses at once, in a flow test's `dtmf` step as in a client's `dtmf` message. */
export const KEYPAD_RUN_PATTERN = /^[0-9*#]{1,32}$/;

/** A collect with no `timeout_ms`: the silence after a key that finishes the number. */
export const DEFAULT_COLLECT_TIMEOUT_MS = 5_000;

/** The move a keypad key makes, as the graph labels it ("key 1"): never a tool's name, which has no spaces. */
export function keyMoveName(key: string): string {
  return `key ${key}`;
}

/** The move a collected number makes ("collect account_number"). */
export function collectMoveName(variable: string): string {
  return `collect ${variable}`;
}

/** The move to `on_enter.transfer.on_failed` when a transfer fails. */
export const TRANSFER_FAILED_MOVE = 'transfer failed';

/** Every keypad move a state declares: its keys (digits ascending, then * and # as written), then its collect. */
export function keypadMoves(dtmf: { keys?: Readonly<Record<string, string>>; collect?: { into: string; then: string } } | undefined): Array<{ via: string; to: string }> {
  const moves = Object.entries(dtmf?.keys ?? {}).map(([key, to]) => ({ via: keyMoveName(key), to }));
  if (dtmf?.collect) moves.push({ via: collectMoveName(dtmf.collect.into), to: dtmf.collect.then });
  return moves;
}

export type KeyDecision =
  | { kind: 'move'; target: string; via: string }
  | { kind: 'collect'; collected: string }
  | { kind: 'finish'; variable: string; value: string; target: string; via: string }
  | { kind: 'ignore'; reason: string };

/** What `key` does in a state with this keypad, `collected` being the digits of a number begun there. */
export function decideKey(dtmf: StateDtmf | undefined, collected: string, key: string): KeyDecision {
  const keys = dtmf?.keys;
  if (collected === '' && keys !== undefined && Object.hasOwn(keys, key)) return { kind: 'move', target: keys[key]!, via: keyMoveName(key) };
  const collect = dtmf?.collect;
  if (!collect) {
    return { kind: 'ignore', reason: dtmf?.keys ? `this state has no key ${key}` : 'this state takes no keypad input' };
  }
  const finish = (value: string): KeyDecision => ({ kind: 'finish', variable: collect.into, value, target: collect.then, via: collectMoveName(collect.into) });
  if (key === collect.finish_on) return collected === '' ? { kind: 'ignore', reason: `${key} finishes a number, and none was begun` } : finish(collected);
  const next = collected + key;
  return next.length >= collect.max_digits ? finish(next) : { kind: 'collect', collected: next };
}

/** What the keypad reads and changes of the runtime's session. */
export interface KeypadSession {
  state(): string;
  dtmf(): StateDtmf | undefined;
  store(variable: string, value: string): void;
  /** Moves and enters `target`; null for a stay. The runtime's move calls `forget()`. */
  move(target: string): StateEntry | null;
}

/** The number the caller has begun typing in the current state. */
export class KeypadInput {
  #collected = '';

  forget(): void {
    this.#collected = '';
  }

  press(session: KeypadSession, digits: string): KeypadOutcome {
    const run = this.#run(session);
    for (const key of digits) {
      const state = session.state();
      const decision = decideKey(session.dtmf(), this.#collected, key);
      switch (decision.kind) {
        case 'move':
          run.move(decision.target, decision.via);
          run.presses.push({ outcome: 'key', key, fromState: state, toState: session.state(), via: decision.via });
          break;
        case 'collect':
          this.#collected = decision.collected;
          run.presses.push({ outcome: 'collecting', key, collected: decision.collected });
          break;
        case 'finish':
          run.finish(key, decision);
          break;
        case 'ignore':
          run.presses.push({ outcome: 'ignored', key, state, reason: decision.reason });
          break;
      }
    }
    return run.outcome();
  }

  timedOut(session: KeypadSession): KeypadOutcome | null {
    const collect = session.dtmf()?.collect;
    if (!collect || this.#collected === '') return null;
    const run = this.#run(session);
    run.finish(null, { variable: collect.into, value: this.#collected, target: collect.then, via: collectMoveName(collect.into) });
    return run.outcome();
  }

  timeoutMs(dtmf: StateDtmf | undefined): number | null {
    if (this.#collected === '') return null;
    return dtmf?.collect?.timeout_ms ?? DEFAULT_COLLECT_TIMEOUT_MS;
  }

  /** One run of keys: what each did, the moves and the stored number, reported together. */
  #run(session: KeypadSession) {
    const fromState = session.state();
    const presses: KeyPress[] = [];
    const moves: RuntimeMove[] = [];
    const stored: Record<string, VariableValue> = {};
    const move = (target: string, via: string) => {
      const from = session.state();
      const entered = session.move(target);
      // A key leading back to its own state is a stay; a number begun there starts over.
      this.forget();
      moves.push({ fromState: from, toState: session.state(), via, entered });
    };
    const finish = (key: string | null, done: { variable: string; value: string; target: string; via: string }) => {
      const from = session.state();
      session.store(done.variable, done.value);
      setOwn(stored, done.variable, done.value);
      move(done.target, done.via);
      presses.push({ outcome: 'collected', key, variable: done.variable, value: done.value, fromState: from, toState: session.state(), via: done.via });
    };
    const outcome = (): KeypadOutcome => ({ presses, fromState, toState: session.state(), moves, stored, collectTimeoutMs: this.timeoutMs(session.dtmf()) });
    return { presses, move, finish, outcome };
  }
}

function listed(keys: string[]): string {
  return keys.length === 1 ? keys[0]! : `${keys.slice(0, -1).join(', ')} and ${keys[keys.length - 1]!}`;
}

/**
 * The caller's turns a keypad outcome adds to the model's history, in order: "The caller pressed
 * 1" for a key that moved or that the state does not take (several in a row told together), "The
 * caller entered 1234" for a finished number. Keys of a number still being collected are told
 * once it is finished.
 */
export function keypadTurns(outcome: Pick<KeypadOutcome, 'presses'>): string[] {
  const turns: string[] = [];
  let pressed: string[] = [];
  const flush = () => {
    if (pressed.length > 0) turns.push(`The caller pressed ${listed(pressed)}`);
    pressed = [];
  };
  for (const press of outcome.presses) {
    if (press.outcome === 'key' || press.outcome === 'ignored') pressed.push(press.key);
    else if (press.outcome === 'collected') {
      flush();
      turns.push(`The caller entered ${press.value}`);
    }
  }
  flush();
  return turns;
}

