import { describe, expect, it } from 'vitest';
import { FlowRuntime } from '../../server/flow/runtime.ts';
import { keypadTurns } from '../../server/flow/keypad.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import type { FlowDocument } from '../../server/flow/types.ts';

// A phone menu as a caller meets it: keys that move, an account number typed in, a transfer to a
// person, and a tool that presses keys on the other side.
const CLINIC = `id: clinic
version: "1.0.0"
initial_state: menu
settings:
  voicemail: { detect: true, message: "Hi {caller}, this is the clinic. Please call us back." }
states:
  menu:
    agent: { prompt: "Offer booking, billing or a person." }
    dtmf:
      keys: { "1": book, "2": billing, "0": human, "*": menu }
      collect: { into: account_number, max_digits: 4, finish_on: "#", timeout_ms: 6000, then: verify }
  book:
    agent: { prompt: Book a visit. }
    dtmf:
      keys: { "9": menu }
  billing:
    agent: { prompt: "Help with the bill of {account_number}.", tools: [press_for_operator] }
    transitions:
      on_tool_call: { press_for_operator: menu }
  verify:
    agent: { prompt: "Check account {account_number}." }
    dtmf:
      collect: { into: pin, max_digits: 6, then: billing }
  human:
    agent: { prompt: Connecting. }
    on_enter:
      say: Connecting you to the front desk.
      transfer: { to: "+15551234567", mode: warm, summary: true, on_failed: menu }
tools:
  press_for_operator:
    description: Dial the operator extension on the other side.
    send_dtmf: "0w12#"
`;

function clinic(): FlowRuntime {
  const parsed = parseFlow(CLINIC);
  // {caller} comes from the session's context.
  expect(parsed.diagnostics.map((d) => `${d.code}:${d.path.join('.')}`)).toEqual(['unresolved_placeholder:settings.voicemail.message']);
  return new FlowRuntime(parsed.document as FlowDocument, { context: { caller: 'Ada' } });
}

describe('the caller presses a key of the menu', () => {
  it('moves at once to the state the key names, as a declared move, and tells the model', () => {
    const runtime = clinic();
    const outcome = runtime.pressKeys('1');
    expect(outcome.presses).toEqual([{ outcome: 'key', key: '1', fromState: 'menu', toState: 'book', via: 'key 1' }]);
    expect(outcome.moves).toEqual([{ fromState: 'menu', toState: 'book', via: 'key 1', entered: expect.objectContaining({ state: 'book', respond: true }) }]);
    expect(runtime.state).toBe('book');
    expect(runtime.path).toEqual(['menu', 'book']);
    expect(keypadTurns(outcome)).toEqual(['The caller pressed 1']);
  });

  it('counts the keys after a move in the state entered', () => {
    const runtime = clinic();
    const outcome = runtime.pressKeys('19');
    expect(outcome.moves.map((m) => `${m.fromState}>${m.toState}`)).toEqual(['menu>book', 'book>menu']);
    expect(runtime.state).toBe('menu');
    expect(keypadTurns(outcome)).toEqual(['The caller pressed 1 and 9']);
  });

  it('treats a key leading to its own state as a stay that enters nothing', () => {
    const outcome = clinic().pressKeys('*');
    expect(outcome.moves).toEqual([{ fromState: 'menu', toState: 'menu', via: 'key *', entered: null }]);
  });

  it('ignores a key in a state without a keypad, and a key the state does not list, telling the model what was pressed', () => {
    const runtime = clinic();
    runtime.pressKeys('2');
    expect(runtime.state).toBe('billing');
    const ignored = runtime.pressKeys('5#');
    expect(ignored.presses).toEqual([
      { outcome: 'ignored', key: '5', state: 'billing', reason: 'this state takes no keypad input' },
      { outcome: 'ignored', key: '#', state: 'billing', reason: 'this state takes no keypad input' },
    ]);
    expect(ignored.moves).toEqual([]);
    expect(runtime.state).toBe('billing');
    expect(keypadTurns(ignored)).toEqual(['The caller pressed 5 and #']);

    const book = clinic();
    book.pressKeys('1');
    expect(book.pressKeys('4').presses).toEqual([{ outcome: 'ignored', key: '4', state: 'book', reason: 'this state has no key 4' }]);
  });
});

describe('the caller types a number', () => {
  it('collects up to the finish key, stores it as text and moves to then', () => {
    const runtime = clinic();
    const begun = runtime.pressKeys('70');
    expect(begun.presses).toEqual([
      { outcome: 'collecting', key: '7', collected: '7' },
      { outcome: 'collecting', key: '0', collected: '70' },
    ]);
    // Once a number is begun, a menu key is a digit of it: 0 did not transfer, 1 does not book.
    expect(runtime.state).toBe('menu');
    expect(runtime.collectTimeoutMs()).toBe(6000);
    expect(keypadTurns(begun)).toEqual([]);

    const finished = runtime.pressKeys('1#');
    expect(finished.presses.at(-1)).toEqual({ outcome: 'collected', key: '#', variable: 'account_number', value: '701', fromState: 'menu', toState: 'verify', via: 'collect account_number' });
    expect(finished.stored).toEqual({ account_number: '701' });
    expect(runtime.variables.account_number).toBe('701');
    expect(runtime.state).toBe('verify');
    expect(runtime.systemPrompt()).toBe('Check account 701.');
    expect(finished.collectTimeoutMs).toBeNull();
    expect(keypadTurns(finished)).toEqual(['The caller entered 701']);
  });

  it('finishes by itself at max_digits, and the keys after it count in the next state', () => {
    const runtime = clinic();
    const outcome = runtime.pressKeys('3456' + '9');
    expect(outcome.presses[3]).toMatchObject({ outcome: 'collected', key: '6', value: '3456' });
    expect(outcome.presses[4]).toEqual({ outcome: 'collecting', key: '9', collected: '9' });
    expect(runtime.state).toBe('verify');
    expect(runtime.variables).toMatchObject({ account_number: '3456' });
  });

  it('ignores the finish key before any digit', () => {
    const runtime = clinic();
    expect(runtime.pressKeys('#').presses).toEqual([{ outcome: 'ignored', key: '#', state: 'menu', reason: '# finishes a number, and none was begun' }]);
    expect(runtime.collectTimeoutMs()).toBeNull();
  });

  it('finishes on the timeout when at least one digit came, and does nothing without one', () => {
    const runtime = clinic();
    expect(runtime.collectTimedOut()).toBeNull();
    runtime.pressKeys('42');
    const outcome = runtime.collectTimedOut();
    expect(outcome?.presses).toEqual([{ outcome: 'collected', key: null, variable: 'account_number', value: '42', fromState: 'menu', toState: 'verify', via: 'collect account_number' }]);
    expect(runtime.state).toBe('verify');
    // verify collects too, with the default timeout, but nothing is begun there yet.
    expect(runtime.collectTimeoutMs()).toBeNull();
    expect(runtime.collectTimedOut()).toBeNull();
    runtime.pressKeys('1');
    expect(runtime.collectTimeoutMs()).toBe(5000);
  });

  it('forgets a half-typed number when the session moves some other way', () => {
    const runtime = clinic();
    runtime.pressKeys('2');
    runtime.beginUserTurn();
    runtime.beginModelResponse();
    runtime.applyToolCall('press_for_operator', {});
    expect(runtime.state).toBe('menu');
    runtime.pressKeys('5');
    expect(runtime.collectTimeoutMs()).toBe(6000);
    runtime.pressKeys('0');
    expect(runtime.pressKeys('1').presses[0]).toEqual({ outcome: 'collecting', key: '1', collected: '501' });
  });
});

describe('a transfer to a person', () => {
  it('is asked for on entering, after the line, without the model', () => {
    const runtime = clinic();
    const [move] = runtime.pressKeys('0').moves;
    expect(move?.entered).toEqual({
      state: 'human',
      say: 'Connecting you to the front desk.',
      endSession: false,
      respond: false,
      resetContext: false,
      interruptible: true,
      transfer: { to: '+15551234567', mode: 'warm', summary: true, onFailed: 'menu' },
    });
  });

  it('takes the caller back to on_failed when it fails', () => {
    const runtime = clinic();
    runtime.pressKeys('0');
    expect(runtime.transferFailed()).toEqual({ fromState: 'human', toState: 'menu', via: 'transfer failed', entered: expect.objectContaining({ state: 'menu' }) });
    expect(runtime.state).toBe('menu');
    expect(runtime.transferFailed()).toBeNull();
  });

  it('is cold when no mode is given, and a cold one never tells a summary', () => {
    const parsed = parseFlow(CLINIC.replace('mode: warm, summary: true, on_failed: menu', 'on_failed: menu'));
    const runtime = new FlowRuntime(parsed.document!);
    expect(runtime.pressKeys('0').moves[0]?.entered?.transfer).toEqual({ to: '+15551234567', mode: 'cold', summary: false, onFailed: 'menu' });
  });
});

describe('the phone settings and tools', () => {
  it('renders the voicemail message with the variables', () => {
    expect(clinic().voicemail()).toEqual({ detect: true, message: 'Hi Ada, this is the clinic. Please call us back.' });
    expect(new FlowRuntime(parseFlow(CLINIC.replace(/settings:\n {2}voicemail:.*\n/, '')).document!).voicemail()).toBeNull();
  });

  it('hands the engine the keys of a send_dtmf tool when the model calls it', () => {
    const runtime = clinic();
    runtime.pressKeys('2');
    // The caller's keys were a turn: the model answers it in a new response.
    runtime.beginUserTurn();
    runtime.beginModelResponse();
    const outcome = runtime.applyToolCall('press_for_operator', {});
    expect(outcome).toMatchObject({ status: 'accepted', sendDtmf: '0w12#', toState: 'menu' });
  });
});
