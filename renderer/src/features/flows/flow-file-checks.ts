// Checking a file before it is imported, and the editor's exports to Pipecat Flows: the server's
// own validator and converters, run in the studio. Loaded with the import dialog and the editor,
// not with the flows screen (flow-files.ts has the light helpers). No DOM here, so the node-side
// unit tests exercise them directly.
import { parseFlow } from '../../../../server/flow/parse.ts';
import { exportDeclarativeFlowText, exportPipecatFlowText, importPipecatFlow, looksLikePipecatFlow, type PipecatFormat } from '../../../../server/flow/pipecat/index.ts';
import type { Diagnostic } from '../../../../server/flow/types.ts';

/** The server's limit on a flow document, for the flows screen's check of a chosen file. */
export { MAX_DOCUMENT_BYTES } from '../../../../server/flow/types.ts';
import { documentIdFromName } from './flow-templates.ts';

export interface FlowCheck {
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

/** The same validator the server runs on upload: errors block the import, warnings do not. */
export function checkFlowText(text: string): FlowCheck {
  const { diagnostics } = parseFlow(text);
  return {
    errors: diagnostics.filter((d) => d.severity === 'error'),
    warnings: diagnostics.filter((d) => d.severity === 'warning'),
  };
}

/**
 * What an import makes of a chosen file: a Voxflow flow as it is, or a Pipecat Flows FlowConfig
 * (told apart by its shape, `initial_node` and `nodes`, whatever the file is called) converted
 * to one. For a FlowConfig the diagnostics are the converter's, at lines of the Pipecat file:
 * what did not map. `yaml` is what is uploaded.
 */
export interface ImportCheck extends FlowCheck {
  source: 'voxflow' | 'pipecat';
  /** For a Pipecat file, which format it was read as (the dialog names it). */
  pipecatFormat?: PipecatFormat | null;
  /** The flow to create: the file itself, or the FlowConfig converted; null when it cannot be. */
  yaml: string | null;
}

export function checkImportText(text: string): ImportCheck {
  if (!looksLikePipecatFlow(text)) return { source: 'voxflow', yaml: text, ...checkFlowText(text) };
  const { yaml, format, diagnostics } = importPipecatFlow(text);
  return {
    source: 'pipecat',
    pipecatFormat: format,
    yaml,
    errors: diagnostics.filter((d) => d.severity === 'error'),
    warnings: diagnostics.filter((d) => d.severity === 'warning'),
  };
}

/**
 * The editor's "Export as Pipecat FlowConfig": the FlowConfig as JSON (a download) and as YAML
 * (the desktop's save dialog saves YAML files), with what it could not carry; or the flow's errors.
 */
export function pipecatExportFile(
  flowName: string,
  yamlText: string,
): { ok: true; baseName: string; json: string; yaml: string; notCarried: string[] } | { ok: false; errors: Diagnostic[] } {
  const exported = exportPipecatFlowText(yamlText);
  if (!exported.ok) return { ok: false, errors: exported.diagnostics };
  return { ok: true, baseName: `${documentIdFromName(flowName)}.pipecat`, json: exported.json, yaml: exported.yaml, notCarried: exported.diagnostics.map((d) => d.message) };
}

/** How the import dialog names a Pipecat file's format. */
export function pipecatFormatLabel(format: PipecatFormat | null | undefined): string {
  if (format === 'declarative') return 'A Pipecat Flows 1.x YAML FlowConfig';
  if (format === 'editor') return 'A Pipecat Flows editor file (Pipecat Flows before 1.0)';
  return 'A Pipecat Flows FlowConfig from before 1.0';
}

/**
 * The editor's export as the YAML FlowConfig of Pipecat Flows 1.x: one YAML file (in the browser
 * and from the desktop's save dialog alike), whose `voxflow` comment keeps the tools for a return
 * to Voxflow, with what it could not carry; or the flow's errors.
 */
export function pipecatDeclarativeExportFile(flowName: string, yamlText: string): { ok: true; fileName: string; yaml: string; notCarried: string[] } | { ok: false; errors: Diagnostic[] } {
  const exported = exportDeclarativeFlowText(yamlText);
  if (!exported.ok) return { ok: false, errors: exported.diagnostics };
  return { ok: true, fileName: `${documentIdFromName(flowName)}.pipecat.yaml`, yaml: exported.yaml, notCarried: exported.diagnostics.map((d) => d.message) };
}
