// The yaml library's parseDocument, in time linear in the text. The library finds duplicate map
// keys by comparing each key with every key before it in its map, so its parse of one map of n
// keys costs n²/2 comparisons: a 256 KiB document of 30,000 short keys took seconds. Here the
// library parses without that check, and one pass over the parsed maps finds the duplicates,
// reporting them as the library would (same code, message and place, in its order).
//
// The library reports a duplicate while it composes the map, in between its other errors. Where
// the document has other errors as well, it is parsed again with the library's own check, so
// the errors keep their exact order; such a document is refused twice over anyway.
//
// Pure TypeScript: the studio bundles this folder, so no Node APIs here.
import { YAMLParseError, isMap, isPair, isScalar, isSeq, parseDocument } from 'yaml';
import type { CST, DocumentOptions, Node, ParseOptions, Range, SchemaOptions, YAMLMap } from 'yaml';

/** What this project passes to parseDocument; duplicate keys are always errors. */
export type ParseYamlOptions = Omit<ParseOptions & DocumentOptions & SchemaOptions, 'uniqueKeys'>;

export function parseYaml(text: string, options: ParseYamlOptions = {}) {
  const doc = parseDocument(text, { ...options, uniqueKeys: false });
  // The Document keeps its options; later edits of it see the default again.
  doc.options.uniqueKeys = true;
  if (!hasDuplicateKey(doc.contents)) return doc;
  // Prettified errors carry a text excerpt this file does not write.
  if (doc.errors.length > 0 || (options.prettyErrors !== false && options.lineCounter)) return parseAgain(text, options);
  // Where the library reports a duplicate depends on the tokens before its key.
  const withTokens = options.keepSourceTokens
    ? doc
    : parseDocument(text, { ...options, lineCounter: undefined, uniqueKeys: false, keepSourceTokens: true });
  const offsets = duplicateKeyOffsets(withTokens.contents);
  if (offsets === null) return parseAgain(text, options);
  for (const offset of offsets) {
    doc.errors.push(new YAMLParseError([offset, offset + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
  }
  return doc;
}

/** The library's own parse, counting the lines afresh: the first parse counted them already. */
function parseAgain(text: string, options: ParseYamlOptions) {
  if (options.lineCounter) options.lineCounter.lineStarts.length = 0;
  return parseDocument(text, options);
}

/** The library's test: scalars with the same value (`===`, so `.nan` never repeats). */
function repeats(key: unknown, seen: Set<unknown>): boolean {
  if (!isScalar(key)) return false;
  const repeated = seen.has(key.value) && !Number.isNaN(key.value);
  seen.add(key.value);
  return repeated;
}

function hasDuplicateKey(root: unknown): boolean {
  let found = false;
  const visit = (node: unknown): void => {
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        if (repeats(pair.key, seen)) found = true;
        visit(pair.key);
        visit(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) visit(item);
    } else if (isPair(node)) {
      visit(node.key);
      visit(node.value);
    }
  };
  visit(root);
  return found;
}

const tokenEnd = (token: CST.SourceToken) => token.offset + token.source.length;

/**
 * Where the library reports each repeated key, in its order: a block map checks a key before
 * composing its value, a flow map after. The place is where the tokens before the key end (as
 * the library's resolveProps has it), else where the previous entry ended. Null where a map
 * lacks the source tokens or ranges this needs.
 */
function duplicateKeyOffsets(root: unknown): number[] | null {
  const found: number[] = [];
  let unsure = false;
  const visitMap = (map: YAMLMap): void => {
    const seen = new Set<unknown>();
    const mapRange = map.range as Range | undefined;
    // After the map's own `{` in flow style.
    let offset = mapRange ? mapRange[0] + (map.flow ? 1 : 0) : NaN;
    for (const pair of map.items) {
      const item = pair.srcToken;
      const key = pair.key as Node | null;
      const keyRange = key?.range;
      const value = pair.value as Node | null;
      if (!item || !keyRange) {
        unsure = true;
        return;
      }
      const start = item.start;
      const keyStart = start.length > 0 ? tokenEnd(start[start.length - 1]!) : offset;
      visit(key);
      const duplicate = repeats(key, seen);
      if (duplicate && Number.isNaN(keyStart)) unsure = true;
      if (duplicate && !map.flow) found.push(keyStart);
      visit(value);
      if (duplicate && map.flow) found.push(keyStart);
      const sep = item.sep ?? [];
      const valuePropsEnd = sep.length > 0 ? tokenEnd(sep[sep.length - 1]!) : keyRange[2];
      offset = value?.range ? value.range[2] : valuePropsEnd;
    }
  };
  const visit = (node: unknown): void => {
    if (isMap(node)) visitMap(node);
    else if (isSeq(node)) for (const item of node.items) visit(item);
    else if (isPair(node)) {
      // A pair straight in a sequence (`!!pairs` of YAML 1.1) may repeat its key.
      visit(node.key);
      visit(node.value);
    }
  };
  visit(root);
  return unsure ? null : found;
}
