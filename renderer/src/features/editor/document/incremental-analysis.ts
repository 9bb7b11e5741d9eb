// Re-analysing only the state a keystroke changed. Parsing a 200-state flow's YAML costs the
// flow worker 100–200 ms on this machine, most of a keystroke's way to the graph; a keystroke
// changes one state. So the worker keeps the last text and its analysis, and when the new text
// differs from it only inside one state's block (below the state's own key line), it parses that
// block alone, splices its value into the last data, and runs the whole-document checks
// (checkStructure, checkSemantics: ~20–40 ms on 200 states) on the result. Diagnostics in the
// changed state are placed with the block's own positions; one elsewhere must be one the last
// analysis had (same code, path and message), and keeps its place, moved down by the lines the
// edit added. Anything else falls back to the whole parse (analyzeFlowText): a change outside
// one state's block (a rename, a new state, settings), a YAML error or warning, anchors and
// aliases, a diagnostic this module cannot place. What it hands back is what analyzeFlowText
// would for the same text (test/renderer/features/editor/incremental-analysis.test.ts compares
// the two over many edits).
import { LineCounter, isMap, isScalar, visit, type Document } from 'yaml';
import { DIAGNOSTIC_CODES } from '../../../../../server/flow/diagnostic-codes.ts';
import { DocumentLocator, type Position } from '../../../../../server/flow/locate.ts';
import { parseYaml } from '../../../../../server/flow/parse-yaml.ts';
import { checkSemantics } from '../../../../../server/flow/semantics.ts';
import { checkStructure } from '../../../../../server/flow/structure.ts';
import { MAX_DOCUMENT_BYTES, MAX_YAML_ALIASES, hasErrors, type Diagnostic, type DocPath, type FlowDocument } from '../../../../../server/flow/types.ts';
import { analyzeFlowText, type Analysis } from '../../../../../server/flow/graph/analyze.ts';
import { isRecord } from '../../../../../server/flow/graph/flow-data.ts';

const utf8 = new TextEncoder();

interface Block {
  name: string;
  /** Offsets in the text: the start of the key line, the end of its first line, the end. */
  start: number;
  bodyStart: number;
  end: number;
  /** 1-based line of the key. */
  line: number;
}

export class IncrementalAnalyzer {
  private last: Analysis | null = null;

  /** The analysis of `text`, as analyzeFlowText gives it. */
  analyze(text: string): Analysis {
    if (this.last?.text === text) return this.last;
    const quick = this.last ? spliced(this.last, text) : null;
    this.last = quick ?? analyzeFlowText(text);
    return this.last;
  }
}

/** The analysis of `text` from `last` and a parse of the one state block it changed; null when it cannot be made so. */
export function spliced(last: Analysis, text: string): Analysis | null {
  const data = last.data;
  if (!data || !isRecord(data.states)) return null;
  // Too large is the whole parse's to say (as parseFlow, encoding only a text that could be).
  if (text.length > MAX_DOCUMENT_BYTES / 4 && utf8.encode(text).length > MAX_DOCUMENT_BYTES) return null;
  // A YAML warning is the whole parse's to report again.
  if (last.diagnostics.some((d) => d.code === 'yaml_syntax')) return null;
  const states = data.states;
  const block = changedBlock(last, states, text);
  if (!block) return null;
  const delta = text.length - last.text.length;
  const oldBody = last.text.slice(block.start, block.end);
  // An anchor here might be what another state's alias refers to.
  if (oldBody.includes('&')) return null;
  const body = text.slice(block.start, block.end + delta);
  const lines = new LineCounter();
  const doc = parseYaml(body, { lineCounter: lines, prettyErrors: false, strict: true });
  if (doc.errors.length > 0 || doc.warnings.length > 0 || !isMap(doc.contents) || doc.contents.items.length !== 1) return null;
  const key = doc.contents.items[0]!.key;
  if (!isScalar(key) || String(key.value) !== block.name || hasAlias(doc)) return null;
  const value = (doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) as Record<string, unknown>)[block.name];

  const nextStates: Record<string, unknown> = {};
  for (const name of Object.keys(states)) nextStates[name] = name === block.name ? value : states[name];
  const next: Record<string, unknown> = { ...data, states: nextStates };

  const addedLines = countLines(body) - countLines(oldBody);
  const oldEndLine = block.line + countLines(oldBody);
  const locator = new DocumentLocator(doc as Document, lines, body);
  const inBlock = (path: DocPath) => path[0] === 'states' && path[1] === block.name;
  const shift = (at: Position): Position => ({ line: at.line + block.line - 1, column: at.column });
  const before = new Map<string, Diagnostic>();
  for (const d of last.diagnostics) before.set(`${d.code}|${d.message}|${JSON.stringify(d.path)}`, d);
  /** Where a diagnostic outside the changed state was; null when the last analysis did not have it. */
  const kept = (code: string, message: string, path: DocPath): Position | null => {
    const old = before.get(`${code}|${message}|${JSON.stringify(path)}`);
    if (!old) return null;
    return { line: old.line >= oldEndLine ? old.line + addedLines : old.line, column: old.column };
  };

  const sourceText = (path: DocPath) => {
    if (!inBlock(path)) return undefined;
    const node = locator.find(path.slice(1)).located.value;
    return isScalar(node) ? node.source : undefined;
  };
  const diagnostics: Diagnostic[] = [];
  for (const { code, message, path, atKey } of checkStructure(next, sourceText)) {
    const at = inBlock(path) ? shift(locator.position(path.slice(1), atKey)) : kept(code, message, path);
    if (!at) return null;
    diagnostics.push({ severity: DIAGNOSTIC_CODES[code], code, message, path, ...at });
  }
  for (const problem of checkSemantics(next)) {
    const { code, message, path } = problem;
    let at: Position | null;
    if (!inBlock(path)) at = kept(code, message, path);
    else if (problem.needle) at = shift(locator.positionInScalar(path.slice(1), problem.needle.text, problem.needle.occurrence));
    else at = shift(locator.position(path.slice(1), problem.atKey));
    if (!at) return null;
    diagnostics.push({ severity: DIAGNOSTIC_CODES[code], code, message, path, ...at });
  }
  // As parseFlow orders them.
  const order = (d: Diagnostic) => (d.severity === 'error' ? 0 : 1);
  diagnostics.sort((a, b) => order(a) - order(b) || a.line - b.line || a.column - b.column);

  const stateLines: Record<string, number> = {};
  for (const [name, line] of Object.entries(last.stateLines)) stateLines[name] = line > block.line ? line + addedLines : line;
  return { text, diagnostics, document: hasErrors(diagnostics) ? null : (next as unknown as FlowDocument), data: next, stateLines };
}

/** The state block of `last.text` inside whose body every change to `text` falls, if one does. */
function changedBlock(last: Analysis, states: Record<string, unknown>, text: string): Block | null {
  const old = last.text;
  if (old === text) return null;
  let prefix = 0;
  const shorter = Math.min(old.length, text.length);
  while (prefix < shorter && old.charCodeAt(prefix) === text.charCodeAt(prefix)) prefix++;
  let suffix = 0;
  while (suffix < shorter - prefix && old.charCodeAt(old.length - 1 - suffix) === text.charCodeAt(text.length - 1 - suffix)) suffix++;
  const changeEnd = old.length - suffix;

  // Every state's key line is known (block style), in the text's order.
  const keyed = Object.entries(last.stateLines).sort((a, b) => a[1] - b[1]);
  if (keyed.length !== Object.keys(states).length) return null;
  const lineStarts = [0];
  for (let i = old.indexOf('\n'); i !== -1; i = old.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const at = keyed.findIndex(([, line], i) => lineStarts[line - 1]! <= prefix && (i + 1 === keyed.length || lineStarts[keyed[i + 1]![1] - 1]! > prefix));
  if (at === -1) return null;
  const [name, line] = keyed[at]!;
  const start = lineStarts[line - 1]!;
  const bodyStart = lineStarts[line] ?? old.length;
  const end = at + 1 < keyed.length ? lineStarts[keyed[at + 1]![1] - 1]! : endOfStates(old, lineStarts, line);
  if (prefix < bodyStart || changeEnd > end) return null;
  return { name, start, bodyStart, end, line };
}

/** Where the `states:` map ends after the last state's key line: the next line at the left margin, or the end. */
function endOfStates(text: string, lineStarts: number[], keyLine: number): number {
  for (let i = keyLine; i < lineStarts.length; i++) {
    const start = lineStarts[i]!;
    const first = text[start];
    if (first !== undefined && first !== ' ' && first !== '\t' && first !== '\n' && first !== '\r' && first !== '#') return start;
  }
  return text.length;
}

function countLines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

function hasAlias(doc: Document): boolean {
  let found = false;
  visit(doc, {
    Alias() {
      found = true;
      return visit.BREAK;
    },
  });
  return found;
}
