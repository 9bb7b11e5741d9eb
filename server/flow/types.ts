// The flow document (the content of a flow's `yaml_content`) and the diagnostics the
// validator reports. Pure types: this folder is bundled into the studio too, so nothing
// here may import from Node.

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

export interface ToolParameter {
  type: ParameterType;
  /** Absent means false. */
  required?: boolean;
}

export interface ToolDefinition {
  description: string;
  /** The tool may have no parameters. */
  parameters?: Record<string, ToolParameter>;
  /** Spoken at once when the tool is called; may contain `{variable}` placeholders. */
  speech_cue?: string;
}

export interface StateUi {
  /** Kind of visual artifact; `card` is the one the studio renders. */
  artifact_type?: string;
  /** Text shown to the user; may contain `{variable}` placeholders. */
  prompt?: string;
}

export interface StateAgent {
  /** Instruction to the model in this state; may contain `{variable}` placeholders. */
  prompt: string;
  /** The tools the model may call in this state. Absent means none. */
  tools?: string[];
}

export interface FlowState {
  ui?: StateUi;
  agent: StateAgent;
  tools?: Record<string, ToolDefinition>;
  transitions?: { on_tool_call?: Record<string, string> };
}

export interface FlowDocument {
  id: string;
  version: string;
  initial_state: string;
  settings?: { base_system_prompt?: string };
  states: Record<string, FlowState>;
}

export type Severity = 'error' | 'warning';

/** Every problem code the parser and validator can report. */
export type DiagnosticCode =
  // errors: the document is refused (422 on upload)
  | 'document_too_large'
  | 'yaml_syntax'
  | 'too_many_aliases'
  | 'missing_key'
  | 'unknown_key'
  | 'wrong_type'
  | 'invalid_parameter_type'
  | 'invalid_tool_name'
  | 'invalid_parameter_name'
  | 'no_states'
  | 'unknown_initial_state'
  | 'undefined_tool'
  | 'transition_from_unlisted_tool'
  | 'unknown_target_state'
  // warnings: accepted, shown in the studio
  | 'unreachable_state'
  | 'dead_end_state'
  | 'unresolved_placeholder'
  | 'unlisted_tool'
  | 'duplicate_tool_listing'
  | 'version_not_semver';

export type DocPath = ReadonlyArray<string | number>;

export interface Diagnostic {
  severity: Severity;
  code: DiagnosticCode;
  message: string;
  /** Where in the document, as keys from the root, e.g. ['states', 'setup', 'agent', 'tools', 0]. */
  path: Array<string | number>;
  /** 1-based line and column in the YAML text. */
  line: number;
  column: number;
}

export interface ParseResult {
  /** The document when it has no errors (warnings allowed); null otherwise. */
  document: FlowDocument | null;
  /** Every problem found, errors first, then in document order. */
  diagnostics: Diagnostic[];
}

export const MAX_DOCUMENT_BYTES = 256 * 1024;
export const MAX_YAML_ALIASES = 100;
export const MAX_TOOL_ROUNDS_PER_TURN = 5;

export function hasErrors(diagnostics: ReadonlyArray<Diagnostic>): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}
