// The flow document's shape (the content of a flow's `yaml_content`), as the spec's tables give
// it: one zod schema, from which every type of the document is inferred and against which
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

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean'] as const;

/** OpenAI's function-name rule: the model API refuses any other tool name. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Parameters become `{placeholder}` variables, so they must be identifiers. */
export const PARAMETER_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * A map key that must match `pattern`. The structure check tests the pattern itself rather than
 * running zod on each of the thousands of keys a large flow has.
 */
function nameKey(pattern: RegExp, code: DiagnosticCode, rule: string) {
  return z.string().regex(pattern).register(keyRules, { code, rule, pattern });
}

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

export const ParameterType = z.enum(PARAMETER_TYPES).register(enumRules, {
  code: 'invalid_parameter_type',
  what: 'parameter type',
});
export type ParameterType = z.infer<typeof ParameterType>;

export const ToolParameter = z.strictObject({
  type: ParameterType,
  /** Absent means false. */
  required: z.boolean().optional(),
});
export type ToolParameter = z.infer<typeof ToolParameter>;

export const ToolDefinition = z.strictObject({
  description: z.string(),
  /** The tool may have no parameters. */
  parameters: z.record(ParameterName, ToolParameter).optional(),
  /** Spoken at once when the tool is called; may contain `{variable}` placeholders. */
  speech_cue: z.string().optional(),
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

export const FlowState = z.strictObject({
  ui: StateUi.optional(),
  agent: StateAgent,
  tools: z.record(ToolName, ToolDefinition).optional(),
  transitions: z
    .strictObject({
      /** Tool name to the state the call leads to; a tool not named here keeps the state. */
      on_tool_call: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
});
export type FlowState = z.infer<typeof FlowState>;

export const FlowDocument = z.strictObject({
  id: z.string(),
  version: z.string(),
  initial_state: z.string(),
  settings: z.strictObject({ base_system_prompt: z.string().optional() }).optional(),
  states: z.record(z.string(), FlowState),
});
export type FlowDocument = z.infer<typeof FlowDocument>;
