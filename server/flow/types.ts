// What the flow model hands its callers: the diagnostics the validator reports, the result of a
// parse, and the document limits. The document's own types are inferred from its schema
// (schema.ts) and the codes come from their list (diagnostic-codes.ts); both are re-exported here
// so the server and the studio import the flow model's types from one place. Nothing in this
// folder may import from Node: it is bundled into the studio too.
import type { DiagnosticCode, Severity } from './diagnostic-codes.ts';
import type { FlowDocument } from './schema.ts';

export { PARAMETER_TYPES } from './schema.ts';
export type {
  FlowDocument,
  FlowSettings,
  FlowState,
  GlobalTool,
  HttpAction,
  OnEnter,
  ParameterType,
  StateAgent,
  StateDtmf,
  StateUi,
  ToolDefinition,
  ToolParameter,
  Transfer,
} from './schema.ts';
export type { DiagnosticCode, Severity } from './diagnostic-codes.ts';

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
