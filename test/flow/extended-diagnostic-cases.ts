// the extended flow keys, each broken once in a valid flow that uses all of them: shared by the
// extended diagnostics test and the check that every code has a case.
import type { DiagnosticCode, Severity } from '../../server/flow/diagnostic-codes.ts';

/** Valid, with no diagnostics: every extended key in use. Line numbers matter. */
export const EXTENDED_VALID = `id: booking
version: "1.0.0"
initial_state: greet
settings:
  base_system_prompt: You book appointments.
  llm: { model: gpt-4o-mini, temperature: 0.3 }
  voice: { provider: flite, voice: kal }
  stt: { model: nova-3 }
  language: en
  recording: true
  idle: { after_secs: 8, reprompt: "Are you still there?", max_reprompts: 2 }
  global_tools:
    talk_to_human: { target: handoff }
tools:
  talk_to_human:
    description: The caller asks for a person.
states:
  greet:
    on_enter:
      set: { office: Main Street }
      say: "Welcome to {office}. Calls are recorded."
    interruptible: false
    endpointing_ms: 700
    agent:
      prompt: Ask which day suits the caller.
      tools: [check_day]
    tools:
      check_day:
        description: Check a day for free slots.
        parameters:
          day:
            type: string
            required: true
            description: The weekday.
            enum: [monday, tuesday]
        http:
          url: https://example.com/slots
          method: POST
          headers: { Authorization: "Bearer {secret.crm_token}" }
          timeout_ms: 2000
          store: { slot: slot.start }
        speech_cue: Let me check.
    transitions:
      on_tool_result:
        check_day: [booked, greet]
  booked:
    context: reset
    respond: false
    on_enter:
      say: "You are booked for {slot} on {day}. Goodbye."
      end_session: true
    agent:
      prompt: Nothing more to do.
  handoff:
    on_enter:
      say: Connecting you to a person.
      end_session: true
    agent:
      prompt: Nothing more to do.
`;

export function editExtended(from: string, to: string): string {
  if (!EXTENDED_VALID.includes(from)) throw new Error(`fixture does not contain ${from}`);
  return EXTENDED_VALID.replace(from, to);
}

export interface ExtendedCase {
  code: DiagnosticCode;
  severity: Severity;
  yaml: string;
  line: number;
  column: number;
  path: Array<string | number>;
  mentions: string;
}

export const EXTENDED_CASES: ExtendedCase[] = [
  {
    code: 'unknown_target_state',
    severity: 'error',
    yaml: editExtended('check_day: [booked, greet]', 'check_day: [booked, greeet]'),
    line: 45,
    column: 29,
    path: ['states', 'greet', 'transitions', 'on_tool_result', 'check_day', 1],
    mentions: 'greeet',
  },
  {
    code: 'invalid_http_url',
    severity: 'error',
    yaml: editExtended('url: https://example.com/slots', 'url: ftp://example.com/slots'),
    line: 37,
    column: 16,
    path: ['states', 'greet', 'tools', 'check_day', 'http', 'url'],
    mentions: 'http:// or https://',
  },
  {
    code: 'global_tool_shadowed',
    severity: 'warning',
    yaml: editExtended('      check_day:\n        description: Check', '      talk_to_human:\n        description: Not now.\n      check_day:\n        description: Check'),
    line: 28,
    column: 7,
    path: ['states', 'greet', 'tools', 'talk_to_human'],
    mentions: 'hides the global tool',
  },
  {
    code: 'interruptible_without_speech',
    severity: 'warning',
    yaml: editExtended('    context: reset\n    respond: false\n    on_enter:\n      say: "You are booked for {slot} on {day}. Goodbye."\n      end_session: true', '    context: reset\n    respond: false\n    interruptible: false'),
    line: 49,
    column: 5,
    path: ['states', 'booked', 'interruptible'],
    mentions: 'nothing to protect',
  },
  {
    code: 'invalid_variable_name',
    severity: 'error',
    yaml: editExtended('set: { office: Main Street }', 'set: { 1office: Main Street }'),
    line: 20,
    column: 14,
    path: ['states', 'greet', 'on_enter', 'set', '1office'],
    mentions: 'variable name',
  },
  {
    code: 'invalid_value',
    severity: 'error',
    yaml: editExtended('    context: reset', '    context: forget'),
    line: 47,
    column: 14,
    path: ['states', 'booked', 'context'],
    mentions: 'keep, reset',
  },
  {
    code: 'out_of_range',
    severity: 'error',
    yaml: editExtended('timeout_ms: 2000', 'timeout_ms: 90000'),
    line: 40,
    column: 23,
    path: ['states', 'greet', 'tools', 'check_day', 'http', 'timeout_ms'],
    mentions: '30000',
  },
  {
    code: 'invalid_enum',
    severity: 'error',
    yaml: editExtended('enum: [monday, tuesday]', 'enum: [monday, 2]'),
    line: 35,
    column: 28,
    path: ['states', 'greet', 'tools', 'check_day', 'parameters', 'day', 'enum', 1],
    mentions: 'not a string',
  },
  {
    code: 'undefined_global_tool',
    severity: 'error',
    yaml: editExtended('    talk_to_human: { target: handoff }', '    talk_to_human: { target: handoff }\n    start_over: {}'),
    line: 14,
    column: 5,
    path: ['settings', 'global_tools', 'start_over'],
    mentions: 'start_over',
  },
  {
    code: 'result_transition_without_http',
    severity: 'warning',
    yaml: editExtended('          store: { slot: slot.start }\n', '          store: { slot: slot.start }\n      wait:\n        description: Wait.\n').replace('tools: [check_day]', 'tools: [check_day, wait]').replace('check_day: [booked, greet]', 'check_day: [booked, greet]\n        wait: [booked]'),
    line: 48,
    column: 9,
    path: ['states', 'greet', 'transitions', 'on_tool_result', 'wait'],
    mentions: 'no http action',
  },
  {
    code: 'credential_in_header',
    severity: 'warning',
    yaml: editExtended('Authorization: "Bearer {secret.crm_token}"', 'Authorization: "Bearer sk-live-123"'),
    line: 39,
    column: 37,
    path: ['states', 'greet', 'tools', 'check_day', 'http', 'headers', 'Authorization'],
    mentions: '/v1/secrets',
  },
];
