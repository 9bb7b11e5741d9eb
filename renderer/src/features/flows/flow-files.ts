// Pure helpers of the flows screen: names, file names, and checking a YAML file before it is
// uploaded. No DOM here, so the node-side unit tests exercise them directly.
import { parseFlow } from '../../../../server/flow/parse.ts';
import { exportDeclarativeFlowText, exportPipecatFlowText, importPipecatFlow, looksLikePipecatFlow, type PipecatFormat } from '../../../../server/flow/pipecat/index.ts';
import type { Diagnostic } from '../../../../server/flow/types.ts';
import { documentIdFromName } from './flow-templates.ts';

/** A YAML file chosen for import: from a file input, or the desktop app's open dialog. */
export interface PickedFile {
  name: string;
  text: string;
}

/** The server's limit on a flow name (server/api/flows/schemas.ts). */
export const MAX_FLOW_NAME = 200;

/** Why a name cannot be saved, in words for the field, or null when it can. */
export function flowNameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (trimmed === '') return 'A flow needs a name.';
  if (trimmed.length > MAX_FLOW_NAME) return `A name has at most ${MAX_FLOW_NAME} characters.`;
  return null;
}

/** The file an exported flow is saved as: its name as a slug, so every OS accepts it. */
export function yamlFileName(flowName: string): string {
  return `${documentIdFromName(flowName)}.yaml`;
}

/** A readable flow name from an imported file's name: "guessing-game.yaml" → "Guessing game". */
export function flowNameFromFileName(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const words = base
    .replace(/(\.pipecat)?\.(ya?ml|json|txt)$/i, '')
    .replace(/[-_.]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_FLOW_NAME);
  return words ? words[0]!.toUpperCase() + words.slice(1) : 'Imported flow';
}

/**
 * `base`, or `base 2`, `base 3`… when a flow already has that name. The server allows equal
 * names, but two "Guessing game" rows in a list are a trap, so the defaults avoid them.
 */
export function uniqueName(base: string, taken: Iterable<string>): string {
  const names = new Set([...taken].map((n) => n.trim().toLowerCase()));
  if (!names.has(base.trim().toLowerCase())) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base} ${n}`;
    if (!names.has(candidate.toLowerCase())) return candidate;
  }
}

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

/** The diagnostics of a 422 `invalid_flow` answer, or none when `details` is not that shape. */
export function diagnosticsFromDetails(details: unknown): Diagnostic[] {
  if (!Array.isArray(details)) return [];
  return details.filter(
    (d): d is Diagnostic =>
      typeof d === 'object' && d !== null && typeof d.message === 'string' && typeof d.line === 'number' && typeof d.column === 'number' && (d.severity === 'error' || d.severity === 'warning'),
  );
}

export interface ExcerptLine {
  number: number;
  text: string;
  /** The line the diagnostic points at. */
  marked: boolean;
}

/** The lines around `line` (1-based), so a designer sees the mistake without opening the file. */
export function excerptAround(text: string, line: number, radius = 1): ExcerptLine[] {
  const lines = text.split(/\r\n|\r|\n/);
  const from = Math.max(1, line - radius);
  const to = Math.min(lines.length, line + radius);
  const excerpt: ExcerptLine[] = [];
  for (let n = from; n <= to; n++) excerpt.push({ number: n, text: (lines[n - 1] ?? '').slice(0, 200), marked: n === line });
  return excerpt;
}
