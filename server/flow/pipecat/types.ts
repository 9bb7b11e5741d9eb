// The Pipecat Flows shapes this folder reads and writes (docs/flows.md#pipecat-flows).
//
// A static FlowConfig (pipecat-flows up to 0.0.24, `src/pipecat_flows/types.py`; static flows
// were removed in 1.0) is `{initial_node, nodes: {name: NodeConfig}}`. As data (JSON or YAML),
// a node's functions are in one of the provider formats the FlowManager accepted as dicts:
// OpenAI's `{type: function, function: {name, description, parameters, transition_to}}`,
// Anthropic's `{name, description, input_schema}`, Gemini's `{function_declarations: [...]}`,
// or the flat FlowsFunctionSchema fields `{name, description, properties, required}`.
// The Pipecat Flows editor (flows.pipecat.ai) saves `{meta, nodes: [{id, type, data}], edges,
// global_functions}`, whose functions route with `next_node_id` (or a `decision`); it is read too.
import type { Diagnostic, DiagnosticCode } from '../types.ts';
import type { PipecatFormat } from './format.ts';

export interface PipecatMessage {
  role: string;
  content: string;
}

/** An action as FlowConfig data: `handler` would be Python code, so only its name can be data. */
export interface PipecatAction {
  type: string;
  text?: string;
  handler?: string;
}

export interface PipecatProperty {
  type: string;
  description?: string;
  enum?: Array<string | number | boolean>;
}

/** The OpenAI dict form: what a static FlowConfig's FlowManager took as plain data. */
export interface PipecatFunction {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: { type: 'object'; properties: Record<string, PipecatProperty>; required?: string[] };
    transition_to?: string;
  };
}

export interface PipecatNode {
  role_messages?: PipecatMessage[];
  task_messages: PipecatMessage[];
  functions?: PipecatFunction[];
  pre_actions?: PipecatAction[];
  post_actions?: PipecatAction[];
  context_strategy?: { strategy: 'APPEND' | 'RESET' | 'RESET_WITH_SUMMARY'; summary_prompt?: string };
  respond_immediately?: boolean;
}

export interface PipecatFlowConfig {
  initial_node: string;
  nodes: Record<string, PipecatNode>;
}

export type PipecatDiagnosticCode = Extract<DiagnosticCode, `pipecat_${string}`>;

/**
 * A part of an export that does not map, at its path in the Voxflow document. Import
 * diagnostics are full `Diagnostic`s, with the line and column in the Pipecat text.
 */
export interface ExportDiagnostic {
  severity: 'warning';
  code: PipecatDiagnosticCode;
  message: string;
  path: Array<string | number>;
}

export interface PipecatImport {
  /** The Voxflow YAML document, or null when the text is not a FlowConfig (an error says why). */
  yaml: string | null;
  /** Which Pipecat Flows shape the file was read as (format.ts); null when it is refused. */
  format: PipecatFormat | null;
  /** What did not map, with the line and column in the Pipecat text; errors first. */
  diagnostics: Diagnostic[];
}

export interface PipecatExport {
  flowConfig: PipecatFlowConfig;
  diagnostics: ExportDiagnostic[];
}
