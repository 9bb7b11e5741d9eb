// Pure helpers of the flows screen: names, file names, excerpts of a file. Checking and converting
// a file is in flow-file-checks.ts, which brings the flow parser and the YAML library with it: the
// flows screen is where the studio opens, and it needs those only once a file is imported.
// No DOM here, so the node-side unit tests exercise them directly.
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
