// What the editor needs to know about a YAML text: the validator's diagnostics, the validated
// document (test-talk runs only a document without errors), and the flow's data even when it has
// validation errors, so the graph still follows a text that parses as YAML. Runs in the flow
// worker (flow-worker.ts): on a 200-state flow a parse costs ~100 ms, too long for a keystroke.
import { parseFlow } from '../parse.ts';
import type { Diagnostic, FlowDocument } from '../types.ts';
import { yamlToJson } from '../yaml-edit/index.ts';
import { isRecord, type FlowData } from './flow-data.ts';

export interface Analysis {
  /** The text analysed; the editor ignores an analysis of a text it no longer has. */
  text: string;
  diagnostics: Diagnostic[];
  document: FlowDocument | null;
  /** The data, when the text parses as YAML to a map; null on a syntax error. */
  data: FlowData | null;
  /** 1-based line of each state's key, for showing a selected state in the YAML. */
  stateLines: Record<string, number>;
}

/** Codes after which the text has no data worth drawing. */
const UNREADABLE = new Set(['yaml_syntax', 'too_many_aliases', 'too_deeply_nested', 'document_too_large']);

export function analyzeFlowText(text: string): Analysis {
  const { document, diagnostics } = parseFlow(text);
  let data: FlowData | null = document as unknown as FlowData | null;
  if (!data && !diagnostics.some((d) => d.severity === 'error' && UNREADABLE.has(d.code))) {
    try {
      const json = yamlToJson(text);
      data = isRecord(json) ? json : null;
    } catch {
      data = null;
    }
  }
  return { text, diagnostics, document, data, stateLines: data ? stateKeyLines(text, Object.keys(isRecord(data.states) ? data.states : {})) : {} };
}

/**
 * Lines of the state keys under a top-level `states:` in block style (what every flow uses).
 * A text scan, not a second YAML parse; a flow-style `states: {...}` simply finds none.
 */
export function stateKeyLines(text: string, names: ReadonlyArray<string>): Record<string, number> {
  const wanted = new Set(names);
  const out: Record<string, number> = {};
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^states\s*:\s*(#.*)?$/.test(l));
  if (start === -1) return out;
  let indent = -1;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(#.*)?$/.test(line)) continue;
    const lead = line.length - line.trimStart().length;
    if (lead === 0) break;
    if (indent === -1) indent = lead;
    if (lead !== indent) continue;
    const match = /^\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#'"][^:#]*?))\s*:(\s|$)/.exec(line);
    if (!match) continue;
    const name = match[1] !== undefined ? unquoteDouble(match[1]) : match[2] !== undefined ? match[2].replace(/''/g, "'") : match[3]!;
    if (wanted.has(name) && out[name] === undefined) out[name] = i + 1;
  }
  return out;
}

function unquoteDouble(body: string): string {
  try {
    return JSON.parse(`"${body}"`) as string;
  } catch {
    // A YAML escape that JSON lacks (\x41, \e): the raw text only misses the scroll target.
    return body;
  }
}
