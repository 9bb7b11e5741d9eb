// The `voxflow:` comment a declarative FlowConfig exported from Voxflow carries at its head: the
// functions' Voxflow definitions (description, parameters, and the speech cue, http action or
// keys a Voxflow tool may have), which the YAML cannot hold because Pipecat takes a function's
// schema from the Python function bound at run time. It is a comment, so Pipecat's loader and
// the JSON Schema never see it; the import reads it back, so a round trip keeps the tools.
//
//   # voxflow:
//   #   functions:
//   #     begin_game:
//   #       description: Start the game.
//   #       parameters:
//   #         secret_thing: { type: string, required: true }
//   #   node_functions:        # only where a state defines a tool of a shared name its own way
//   #     playing:
//   #       hint: { description: A hint for this state. }
//
// The block is the `# voxflow:` line among the comment lines before the document's first line of
// content, and the comment lines after it whose text is indented (`#` and three spaces or more),
// or `#` alone; each loses its first two characters (`# `) to give YAML.
import { Document, LineCounter } from 'yaml';
import { DocumentLocator, type Position } from '../locate.ts';
import { parseYaml } from '../parse-yaml.ts';
import { MAX_YAML_ALIASES, type DocPath, type ToolDefinition } from '../types.ts';
import { isObject } from './read-functions.ts';

export interface Companion {
  /** Function name to its Voxflow tool definition, as written (the importer checks it). */
  functions: Record<string, unknown>;
  /** Node name to function name to the definition that node's state uses instead. */
  nodeFunctions: Record<string, Record<string, unknown>>;
  /** The place in the file of a path in the block (`['functions', 'begin_game']`). */
  locate(path: DocPath, atKey?: boolean): Position;
}

export type CompanionRead = { ok: true; companion: Companion | null } | { ok: false; message: string; at: Position };

const MARKER = /^#[ \t]?voxflow:[ \t]*$/;
const BLOCK_LINE = /^#( {3,}|\s*$)/;

/** The companion block of a file's text, if it has one. */
export function readCompanion(text: string): CompanionRead {
  const lines = text.split(/\r?\n/);
  let marker = -1;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (MARKER.test(line)) {
      marker = index;
      break;
    }
    if (line.trim() !== '' && !line.startsWith('#')) break;
  }
  if (marker < 0) return { ok: true, companion: null };
  let end = marker + 1;
  while (end < lines.length && BLOCK_LINE.test(lines[end]!)) end++;
  while (end > marker + 1 && /^#\s*$/.test(lines[end - 1]!)) end--;
  const yamlText = lines
    .slice(marker, end)
    .map((line) => line.slice(2))
    .join('\n');

  const counter = new LineCounter();
  const doc = parseYaml(yamlText, { lineCounter: counter, prettyErrors: false });
  const locator = new DocumentLocator(doc, counter, yamlText);
  const shift = (at: Position): Position => ({ line: at.line + marker, column: at.column + 2 });
  if (doc.errors.length > 0) return { ok: false, message: `the \`voxflow\` comment is not YAML: ${doc.errors[0]!.message}`, at: shift(locator.offsetPosition(doc.errors[0]!.pos[0])) };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch {
    return { ok: false, message: `aliases in the \`voxflow\` comment expand to more than ${MAX_YAML_ALIASES} copies`, at: shift({ line: 1, column: 1 }) };
  }
  const block = isObject(data) ? data.voxflow : undefined;
  if (block !== null && block !== undefined && !isObject(block)) return { ok: false, message: 'the `voxflow` comment is not a map of `functions`', at: shift({ line: 1, column: 1 }) };
  const functions = isObject(block) && isObject(block.functions) ? block.functions : {};
  const nodeFunctions: Record<string, Record<string, unknown>> = {};
  if (isObject(block) && isObject(block.node_functions)) {
    for (const [node, map] of Object.entries(block.node_functions)) if (isObject(map)) Object.defineProperty(nodeFunctions, node, { value: map, enumerable: true });
  }
  return {
    ok: true,
    companion: { functions, nodeFunctions, locate: (path, atKey = false) => shift(locator.position(['voxflow', ...path], atKey)) },
  };
}

/** The block's text for an export: `# `-prefixed YAML, ending with a line break; empty when there are no functions. */
export function writeCompanion(functions: Record<string, ToolDefinition>, nodeFunctions: Record<string, Record<string, ToolDefinition>>, toYaml: (doc: Document) => string): string {
  if (Object.keys(functions).length === 0 && Object.keys(nodeFunctions).length === 0) return '';
  const block = { voxflow: { functions, ...(Object.keys(nodeFunctions).length > 0 ? { node_functions: nodeFunctions } : {}) } };
  const yaml = toYaml(new Document(block, { aliasDuplicateObjects: false }));
  return `${yaml
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? '#' : `# ${line}`))
    .join('\n')}\n`;
}
