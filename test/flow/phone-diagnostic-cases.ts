// The keys a phone call uses (a state's keypad, on_enter.transfer, settings.voicemail, a tool's
// send_dtmf), each broken once in a valid flow that uses all of them: shared by the phone
// diagnostics test and the check that every code has a case.
import type { ExtendedCase } from './extended-diagnostic-cases.ts';

/** Valid, with no diagnostics: every phone key in use. Line numbers matter. */
export const PHONE_VALID = `id: clinic
version: "1.0.0"
initial_state: menu
settings:
  voicemail: { detect: true, message: "Hi, this is the clinic. Please call us back." }
states:
  menu:
    agent:
      prompt: Offer booking or a person.
    dtmf:
      keys: { "1": book, "0": human, "*": menu, "#": book }
      collect: { into: account_number, max_digits: 8, finish_on: "#", timeout_ms: 6000, then: verify }
  verify:
    agent:
      prompt: "Check account {account_number}."
      tools: [press_for_operator]
    transitions:
      on_tool_call: { press_for_operator: book }
  book:
    on_enter: { say: Booked. Goodbye., end_session: true }
    agent:
      prompt: Nothing more to do.
  human:
    on_enter:
      say: "Connecting you to the front desk."
      transfer: { to: "+15551234567", mode: warm, summary: true, on_failed: menu }
    agent:
      prompt: Nothing more to do.
tools:
  press_for_operator:
    description: Dial the operator extension on the other side.
    send_dtmf: "0w1#"
`;

export function editPhone(from: string, to: string): string {
  if (!PHONE_VALID.includes(from)) throw new Error(`fixture does not contain ${from}`);
  return PHONE_VALID.replace(from, to);
}

export const PHONE_CASES: ExtendedCase[] = [
  {
    code: 'invalid_dtmf_key',
    severity: 'error',
    yaml: editPhone('"*": menu', '"12": menu'),
    line: 11,
    column: 38,
    path: ['states', 'menu', 'dtmf', 'keys', '12'],
    mentions: 'one of 0-9, * or #',
  },
  {
    code: 'unknown_target_state',
    severity: 'error',
    yaml: editPhone('"1": book,', '"1": bok,'),
    line: 11,
    column: 20,
    path: ['states', 'menu', 'dtmf', 'keys', '1'],
    mentions: '"bok", which is not a state',
  },
  {
    code: 'unknown_target_state',
    severity: 'error',
    yaml: editPhone('then: verify', 'then: verifyy'),
    line: 12,
    column: 95,
    path: ['states', 'menu', 'dtmf', 'collect', 'then'],
    mentions: 'verifyy',
  },
  {
    code: 'out_of_range',
    severity: 'error',
    yaml: editPhone('max_digits: 8', 'max_digits: 65'),
    line: 12,
    column: 52,
    path: ['states', 'menu', 'dtmf', 'collect', 'max_digits'],
    mentions: 'from 1 to 64 digits',
  },
  {
    code: 'out_of_range',
    severity: 'error',
    yaml: editPhone('timeout_ms: 6000', 'timeout_ms: 100'),
    line: 12,
    column: 83,
    path: ['states', 'menu', 'dtmf', 'collect', 'timeout_ms'],
    mentions: 'from 500 to 60000 milliseconds',
  },
  {
    code: 'invalid_value',
    severity: 'error',
    yaml: editPhone('finish_on: "#"', 'finish_on: "0"'),
    line: 12,
    column: 66,
    path: ['states', 'menu', 'dtmf', 'collect', 'finish_on'],
    mentions: 'use one of #, *',
  },
  {
    code: 'invalid_variable_name',
    severity: 'error',
    yaml: editPhone('into: account_number', 'into: account-number'),
    line: 12,
    column: 24,
    path: ['states', 'menu', 'dtmf', 'collect', 'into'],
    mentions: 'not a valid variable name',
  },
  {
    code: 'missing_key',
    severity: 'error',
    yaml: editPhone('{ into: account_number, ', '{ '),
    line: 12,
    column: 7,
    path: ['states', 'menu', 'dtmf', 'collect'],
    mentions: 'needs the key "into"',
  },
  {
    code: 'invalid_transfer_target',
    severity: 'error',
    yaml: editPhone('to: "+15551234567"', 'to: "555 123 4567"'),
    line: 26,
    column: 23,
    path: ['states', 'human', 'on_enter', 'transfer', 'to'],
    mentions: 'E.164',
  },
  {
    code: 'missing_key',
    severity: 'error',
    yaml: editPhone(', on_failed: menu }', ' }'),
    line: 26,
    column: 7,
    path: ['states', 'human', 'on_enter', 'transfer'],
    mentions: 'needs on_failed',
  },
  {
    code: 'unknown_target_state',
    severity: 'error',
    yaml: editPhone('on_failed: menu', 'on_failed: mneu'),
    line: 26,
    column: 77,
    path: ['states', 'human', 'on_enter', 'transfer', 'on_failed'],
    mentions: 'mneu',
  },
  {
    code: 'invalid_value',
    severity: 'error',
    yaml: editPhone('mode: warm', 'mode: hot'),
    line: 26,
    column: 45,
    path: ['states', 'human', 'on_enter', 'transfer', 'mode'],
    mentions: 'cold, warm',
  },
  {
    code: 'invalid_value',
    severity: 'error',
    yaml: editPhone('mode: warm, ', 'mode: cold, '),
    line: 26,
    column: 51,
    path: ['states', 'human', 'on_enter', 'transfer', 'summary'],
    mentions: 'warm transfer only',
  },
  {
    code: 'invalid_value',
    severity: 'error',
    yaml: editPhone('mode: warm, summary: true, ', 'mode: cold, timeout_seconds: 10, '),
    line: 26,
    column: 51,
    path: ['states', 'human', 'on_enter', 'transfer', 'timeout_seconds'],
    mentions: 'how long a warm transfer rings',
  },
  {
    code: 'out_of_range',
    severity: 'error',
    yaml: editPhone('summary: true, ', 'summary: true, timeout_seconds: 2, '),
    line: 26,
    column: 83,
    path: ['states', 'human', 'on_enter', 'transfer', 'timeout_seconds'],
    mentions: 'from 5 to 120 seconds',
  },
  {
    code: 'invalid_value',
    severity: 'error',
    yaml: editPhone('      say: "Connecting you to the front desk."\n', '      say: "Connecting you to the front desk."\n      end_session: true\n'),
    line: 26,
    column: 7,
    path: ['states', 'human', 'on_enter', 'end_session'],
    mentions: 'both ends the call and transfers it',
  },
  {
    code: 'wrong_type',
    severity: 'error',
    yaml: editPhone('detect: true', 'detect: "yes"'),
    line: 5,
    column: 24,
    path: ['settings', 'voicemail', 'detect'],
    mentions: 'true or false',
  },
  {
    code: 'invalid_dtmf_digits',
    severity: 'error',
    yaml: editPhone('send_dtmf: "0w1#"', 'send_dtmf: "0x1#"'),
    line: 32,
    column: 16,
    path: ['tools', 'press_for_operator', 'send_dtmf'],
    mentions: 'A-D, and w',
  },
  {
    code: 'invalid_value',
    severity: 'error',
    yaml: editPhone('    send_dtmf: "0w1#"', '    send_dtmf: "0w1#"\n    http: { url: "https://example.com/x" }'),
    line: 32,
    column: 5,
    path: ['tools', 'press_for_operator', 'send_dtmf'],
    mentions: 'send_dtmf or http, not both',
  },
];
