// How deep a YAML document nests its maps and lists. Reading a document recurses once per level
// (the yaml library's composer, toJS, the validator), so a hostile one nested thousands deep
// would end in the engine's "Maximum call stack size exceeded"; it is refused instead, naming the
// limit and the place where it went deeper. Measured without recursion: on the parsed document,
// or, when the library's own composer overflowed, on its concrete syntax tree (its parser keeps
// an explicit stack, so it reads any depth).
//
// Pure TypeScript: the studio bundles this folder, so no Node APIs here.
import { Parser, isMap, isPair, isSeq, type CST, type Document } from 'yaml';

/**
 * Maps and lists inside one another, the document itself counting as the first: a flow nests
 * about 8, a tool's JSON Schema a few more. The same as a JSON request body's limit, so a flow
 * sent as JSON is never refused for its depth once it is YAML.
 */
export const MAX_NESTING_DEPTH = 64;

export interface TooDeep {
  /** Where the first collection past the limit starts (a text offset). */
  offset: number;
  message: string;
}

const OVERFLOW = /Maximum call stack size exceeded/i;

/** Whether one of the library's errors is its own stack overflow (it reports it as a parse error). */
export function isStackOverflowError(error: { message: string }): boolean {
  return OVERFLOW.test(error.message);
}

/** The first map or list nested more than MAX_NESTING_DEPTH deep in `doc` (parsed from `text`), or null. */
export function tooDeeplyNested(doc: Document, text: string): TooDeep | null {
  const offset = doc.errors.some(isStackOverflowError) ? tooDeepInSyntaxTree(text) : tooDeepInDocument(doc.contents);
  return offset === null ? null : { offset, message: tooDeepMessage() };
}

export function tooDeepMessage(withAliases = false): string {
  return `maps and lists are nested more than ${MAX_NESTING_DEPTH} levels deep here${withAliases ? ' (with its aliases expanded)' : ''}; at most ${MAX_NESTING_DEPTH} are allowed`;
}

function tooDeepInDocument(root: unknown): number | null {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (isPair(node)) {
      stack.push({ node: node.value, depth }, { node: node.key, depth });
    } else if (isMap(node) || isSeq(node)) {
      if (depth + 1 > MAX_NESTING_DEPTH) return node.range?.[0] ?? 0;
      for (let i = node.items.length - 1; i >= 0; i--) stack.push({ node: node.items[i], depth: depth + 1 });
    }
    // What an alias brings in is counted where its anchor is; expanded, dataTooDeep checks it.
  }
  return null;
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);

function tooDeepInSyntaxTree(text: string): number | null {
  const stack: Array<{ token: CST.Token | undefined; depth: number }> = [];
  for (const token of new Parser().parse(text)) {
    if (token.type === 'document') stack.push({ token: token.value, depth: 0 });
  }
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (!token || !COLLECTIONS.has(token.type)) continue;
    const collection = token as CST.BlockMap | CST.BlockSequence | CST.FlowCollection;
    if (depth + 1 > MAX_NESTING_DEPTH) return collection.offset;
    for (let i = collection.items.length - 1; i >= 0; i--) {
      const item = collection.items[i]! as { key?: CST.Token | null; value?: CST.Token };
      stack.push({ token: item.value, depth: depth + 1 });
      if (item.key) stack.push({ token: item.key, depth: depth + 1 });
    }
  }
  // Not expected (the library overflows only far deeper than this limit); said at the start.
  return 0;
}

/** Whether plain data (a document after toJS, aliases expanded) nests deeper than the limit. */
export function dataTooDeep(value: unknown): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > MAX_NESTING_DEPTH) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
