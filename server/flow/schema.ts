// The flow document's shape (the content of a flow's `yaml_content`), as the spec's tables give
// it and with the extended keys (docs/flows.md) as optional ones (a document valid under the spec keeps
// exactly its meaning): one zod schema, from which every type of the document is inferred and against which
// structure.ts checks uploaded and edited documents. A new key is one edit here, plus its rule in
// semantics.ts when it refers to other parts of the flow.
//
// Every object is strict because unknown keys are errors: a typo must not pass silently.
import { z } from 'zod';
import type { DiagnosticCode } from './diagnostic-codes.ts';

/**
 * What the structure check tells a designer whose map key breaks its key schema: the code and
 * the naming rule in words. Made only by `nameKey`, so `pattern` is the one its schema checks.
 */
export const keyRules = z.registry<{ code: DiagnosticCode; rule: string; pattern: RegExp }>();

/** What the structure check tells a designer whose value is none of an enum's options. */
export const enumRules = z.registry<{ code: DiagnosticCode; what: string }>();

/** The range a number must lie in; made only by `boundedNumber`, so zod checks the same range. */
export const rangeRules = z.registry<{ min: number; max: number; integer: boolean; unit: string }>();

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean'] as const;

/** OpenAI's function-name rule: the model API refuses any other tool name. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Parameters become `{placeholder}` variables, so they must be identifiers. */
export const PARAMETER_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/**
 * A state's `group`: a short name the studio frames and collapses states by (a label on the
 * canvas, so short; no spaces, so it is written the same way in every state that shares it).
 */
export const GROUP_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;

/**
 * A map key that must match `pattern`. The structure check tests the pattern itself rather than
 * running zod on each of the thousands of keys a large flow has.
 */
function nameKey(pattern: RegExp, code: DiagnosticCode, rule: string) {
  return z.string().regex(pattern).register(keyRules, { code, rule, pattern });
}

/** A number within [min, max]; `unit` names it in messages ("milliseconds"). */
function boundedNumber(min: number, max: number, integer: boolean, unit: string) {
  const base = integer ? z.number().int() : z.number();
  return base.min(min).max(max).register(rangeRules, { min, max, integer, unit });
}

/** What a variable can be set to in the document: text, a number or true/false. */
const ScalarValue = z.union([z.string(), z.number(), z.boolean()]);

const ToolName = nameKey(
  TOOL_NAME_PATTERN,
  'invalid_tool_name',
  'a tool name is 1 to 64 letters, digits, _ or - (the rule of the model APIs)',
);

const ParameterName = nameKey(
  PARAMETER_NAME_PATTERN,
  'invalid_parameter_name',
  'a parameter name is a letter or _ followed by letters, digits or _ (it becomes a {placeholder} variable)',
);

const VariableName = nameKey(
  PARAMETER_NAME_PATTERN,
  'invalid_variable_name',
  'a variable name is a letter or _ followed by letters, digits or _ (it is used as a {placeholder})',
);

export const ParameterType = z.enum(PARAMETER_TYPES).register(enumRules, {
  code: 'invalid_parameter_type',
  what: 'parameter type',
});
export type ParameterType = z.infer<typeof ParameterType>;

export const ToolParameter = z.strictObject({
  type: ParameterType,
  /** Absent means false. */
  required: z.boolean().optional(),
  /** Given to the model in the tool's JSON Schema. */
  description: z.string().optional(),
  /** The only values the model may send (JSON Schema `enum`); each of the parameter's type. */
  enum: z.array(ScalarValue).optional(),
});
export type ToolParameter = z.infer<typeof ToolParameter>;

export const HTTP_METHODS = ['POST', 'PUT', 'PATCH'] as const;

export const HttpMethod = z.enum(HTTP_METHODS).register(enumRules, { code: 'invalid_value', what: 'HTTP method' });

/**
 * A tool the engine answers by calling the account's own service: it sends the call (signed like
 * webhooks) and gives the model the JSON result. Header values may name the account's stored
 * secrets as `{secret.NAME}`; the secret itself is never written in the document.
 */
export const HttpAction = z.strictObject({
  /** http:// or https:// (checked in semantics.ts, with the rest of the URL's rules). */
  url: z.string(),
  /** Absent means POST: the call's JSON is the body. */
  method: HttpMethod.optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Absent means 5000; a slower answer is an error result and the call goes on. */
  timeout_ms: boundedNumber(100, 30_000, true, 'milliseconds').optional(),
  /** Variable name to the result field (dotted path, e.g. `slot.start`) stored in it on success. */
  store: z.record(VariableName, z.string()).optional(),
});
export type HttpAction = z.infer<typeof HttpAction>;

export const ToolDefinition = z.strictObject({
  description: z.string(),
  /** The tool may have no parameters. */
  parameters: z.record(ParameterName, ToolParameter).optional(),
  /** Spoken at once when the tool is called; may contain `{variable}` placeholders. */
  speech_cue: z.string().optional(),
  http: HttpAction.optional(),
  /**
   * Keys the agent presses on the phone line when the model calls the tool (an IVR on the other
   * side): 0-9, *, #, A-D, and w for half a second's pause (checked in semantics-local.ts).
   */
  send_dtmf: z.string().optional(),
});
export type ToolDefinition = z.infer<typeof ToolDefinition>;

export const StateUi = z.strictObject({
  /** Kind of visual artifact; `card` is the one the studio renders. */
  artifact_type: z.string().optional(),
  /** Text shown to the user; may contain `{variable}` placeholders. */
  prompt: z.string().optional(),
});
export type StateUi = z.infer<typeof StateUi>;

export const StateAgent = z.strictObject({
  /** Instruction to the model in this state; may contain `{variable}` placeholders. */
  prompt: z.string(),
  /** The tools the model may call in this state. Absent means none. */
  tools: z.array(z.string()).optional(),
});
export type StateAgent = z.infer<typeof StateAgent>;

/** The keys a phone keypad has: what `dtmf.keys` may map and a caller may press. */
export const DTMF_KEY_PATTERN = /^[0-9*#]$/;

const DtmfKey = nameKey(DTMF_KEY_PATTERN, 'invalid_dtmf_key', 'a keypad key is one of 0-9, * or # (quote it: "1", "*", "#")');

export const FinishKey = z.enum(['#', '*']).register(enumRules, { code: 'invalid_value', what: 'finish key' });

/** The caller's keypad in a state: keys that move at once, and a number collected into a variable. */
export const StateDtmf = z.strictObject({
  /** A key to the state it moves to, as a declared transition. */
  keys: z.record(DtmfKey, z.string()).optional(),
  collect: z
    .strictObject({
      /** The variable the digits are stored in, as text (leading zeros kept). */
      into: z.string(),
      /** Collecting finishes when this many digits were pressed. */
      max_digits: boundedNumber(1, 64, true, 'digits'),
      /** Pressing this key finishes collecting; it is not stored. */
      finish_on: FinishKey.optional(),
      /** Silence after a digit that finishes collecting; absent means 5000. */
      timeout_ms: boundedNumber(500, 60_000, true, 'milliseconds').optional(),
      /** The state the session moves to once the number is collected. */
      then: z.string(),
    })
    .optional(),
});
export type StateDtmf = z.infer<typeof StateDtmf>;

export const TransferMode = z.enum(['cold', 'warm']).register(enumRules, { code: 'invalid_value', what: 'transfer mode' });

/**
 * Hands the caller to a person: a phone number (E.164) or a SIP address. `cold` passes the call
 * on; `warm` first calls the person, tells them what the call was about (with `summary`), then
 * joins them. The address is checked in semantics-local.ts.
 */
export const Transfer = z.strictObject({
  to: z.string(),
  /** Absent means cold. */
  mode: TransferMode.optional(),
  /** Warm only: tell the person a summary of the call before joining them. */
  summary: z.boolean().optional(),
  /** Warm only: how long the person's phone may ring before the caller goes to on_failed (30 when absent). */
  timeout_seconds: boundedNumber(5, 120, true, 'seconds').optional(),
  /** Where the caller goes when the transfer fails (no answer, busy); required for warm. */
  on_failed: z.string().optional(),
});
export type Transfer = z.infer<typeof Transfer>;

/** What happens on entering a state, before and without the model: set, then say, then end. */
export const OnEnter = z.strictObject({
  /** Variables to set; text values may contain `{variable}` placeholders. */
  set: z.record(VariableName, ScalarValue).optional(),
  /** Spoken exactly as written (placeholders rendered); the model is told it was said. */
  say: z.string().optional(),
  /** End the session once what was said has been spoken; the model is not run. */
  end_session: z.boolean().optional(),
  /** Transfer the call once what was said has been spoken; the model is not run. */
  transfer: Transfer.optional(),
});
export type OnEnter = z.infer<typeof OnEnter>;

export const BackchannelMode = z.enum(['ignore', 'interrupt']).register(enumRules, { code: 'invalid_value', what: 'backchannels mode' });

/**
 * Turn-taking (docs/flows.md#turn-taking): when caller speech over the agent stops it, and how long
 * the silence after the caller's words lasts before their turn is over. On a state, or under
 * `settings.turn` as the flow's default; each key unset falls back to the flow's, then the server's.
 * That `max_endpointing_ms` is not below `endpointing_ms` is checked in semantics-local.ts.
 */
export const TurnSettings = z.strictObject({
  /** Words the caller must say over the agent to stop it; 0: any speech stops it at once. */
  min_interruption_words: boundedNumber(0, 10, true, 'words').optional(),
  /** ignore: "uh-huh", "yeah", "I see" said over the agent do not stop it. */
  backchannels: BackchannelMode.optional(),
  /** The silence that ends a turn that neither looks unfinished nor is a short answer. */
  endpointing_ms: boundedNumber(100, 5_000, true, 'milliseconds').optional(),
  /** The longest silence waited for after words that look unfinished; equal to endpointing_ms: a fixed wait. */
  max_endpointing_ms: boundedNumber(100, 10_000, true, 'milliseconds').optional(),
});
export type TurnSettings = z.infer<typeof TurnSettings>;

export const ContextMode = z.enum(['keep', 'reset']).register(enumRules, { code: 'invalid_value', what: 'context mode' });

export const FlowState = z.strictObject({
  ui: StateUi.optional(),
  agent: StateAgent,
  tools: z.record(ToolName, ToolDefinition).optional(),
  transitions: z
    .strictObject({
      /** Tool name to the state the call leads to; a tool not named here keeps the state. */
      on_tool_call: z.record(z.string(), z.string()).optional(),
      /** Tool name to the states its result may choose (`next_state` in the result), no others. */
      on_tool_result: z.record(z.string(), z.array(z.string())).optional(),
    })
    .optional(),
  on_enter: OnEnter.optional(),
  /** false: the model does not speak on entering; the state waits for the caller. */
  respond: z.boolean().optional(),
  /** false: the caller cannot cut what is said on entering (on_enter.say and the first reply). */
  interruptible: z.boolean().optional(),
  /** Silence that ends the caller's turn in this state (the server's default otherwise). */
  endpointing_ms: boundedNumber(100, 5_000, true, 'milliseconds').optional(),
  /** Turn-taking in this state, over the flow's `settings.turn`. */
  turn: TurnSettings.optional(),
  /** reset: the model remembers nothing said before entering. Absent means keep. */
  context: ContextMode.optional(),
  /** What the caller's phone keypad does in this state; absent: a key pressed here moves nothing. */
  dtmf: StateDtmf.optional(),
  /**
   * The group the studio draws the state in (a frame round the states sharing it, which may be
   * collapsed to one node). Only for reading the flow: the runtime and the exports ignore it.
   * Its name is checked in semantics-local.ts.
   */
  group: z.string().optional(),
});
export type FlowState = z.infer<typeof FlowState>;

/** A tool offered in every state; with a target, a call moves there from anywhere. */
export const GlobalTool = z.strictObject({ target: z.string().optional() });
export type GlobalTool = z.infer<typeof GlobalTool>;

/** What an outcome field may hold (docs/flows.md#outcome-and-success). */
export const OUTCOME_TYPES = ['string', 'number', 'integer', 'boolean', 'enum', 'date'] as const;

export const OutcomeType = z.enum(OUTCOME_TYPES).register(enumRules, { code: 'invalid_outcome_type', what: 'valid outcome type' });
export type OutcomeType = z.infer<typeof OutcomeType>;

/** One field of what a call produced: taken from the variable of its name, else extracted by the model. */
export const OutcomeField = z.strictObject({
  type: OutcomeType,
  /** Told to the model that extracts it. */
  description: z.string().optional(),
  /** Absent means false: a required field the call did not produce is `unknown`, with the error. */
  required: z.boolean().optional(),
  /** enum only: the values it may take (checked in semantics-outcome.ts). */
  values: z.array(z.string()).optional(),
});
export type OutcomeField = z.infer<typeof OutcomeField>;

/**
 * One success criterion: exactly one key (checked in semantics-outcome.ts). `outcome` compares
 * an outcome field (`booked == true`), `reached` names a state, `transferred` says whether the
 * call was handed to a person, `judge` asks the model.
 */
export const SuccessCriterion = z.strictObject({
  outcome: z.string().optional(),
  reached: z.string().optional(),
  transferred: z.boolean().optional(),
  judge: z.string().optional(),
});
export type SuccessCriterion = z.infer<typeof SuccessCriterion>;

export const FlowSettings = z.strictObject({
  base_system_prompt: z.string().optional(),
  llm: z.strictObject({ model: z.string().optional(), temperature: boundedNumber(0, 2, false, '').optional() }).optional(),
  voice: z.strictObject({ provider: z.string().optional(), voice: z.string().optional() }).optional(),
  stt: z.strictObject({ model: z.string().optional() }).optional(),
  /** The caller's language, e.g. `en` or `de-DE`: given to speech recognition. */
  language: z.string().optional(),
  /** Turn-taking in every state that does not set its own (docs/flows.md#turn-taking). */
  turn: TurnSettings.optional(),
  /** true: the call is recorded (as if the session asked for it). */
  recording: z.boolean().optional(),
  /** After `after_secs` of silence, say `reprompt`; after `max_reprompts` of them, end the call. */
  idle: z
    .strictObject({
      after_secs: boundedNumber(1, 3_600, false, 'seconds'),
      reprompt: z.string().optional(),
      max_reprompts: boundedNumber(0, 10, true, '').optional(),
    })
    .optional(),
  /** Names of top-level `tools` offered in every state. */
  global_tools: z.record(z.string(), GlobalTool).optional(),
  /**
   * Outbound phone calls: when an answering machine picks up, leave `message` (placeholders
   * rendered) after the beep and hang up.
   */
  voicemail: z.strictObject({ detect: z.boolean(), message: z.string().optional() }).optional(),
  /** What each call produced, field by field, filled in once it ended (docs/flows.md#outcome-and-success). */
  outcome: z.record(VariableName, OutcomeField).optional(),
  /** When a call succeeded: every criterion met (docs/flows.md#outcome-and-success). */
  success: z.array(SuccessCriterion).optional(),
});
export type FlowSettings = z.infer<typeof FlowSettings>;

export const FlowDocument = z.strictObject({
  id: z.string(),
  version: z.string(),
  initial_state: z.string(),
  settings: FlowSettings.optional(),
  /** Tools shared by the whole flow: global tools, and tools a state lists without defining. */
  tools: z.record(ToolName, ToolDefinition).optional(),
  states: z.record(z.string(), FlowState),
});
export type FlowDocument = z.infer<typeof FlowDocument>;
