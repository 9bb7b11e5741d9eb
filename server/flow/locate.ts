// Maps a document path (['states', 'setup', 'agent', 'tools', 0]) to a line and column in the
// YAML text, so every diagnostic can point at the exact place a designer has to fix.
import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair, type Range, type YAMLMap } from 'yaml';
import type { DocPath } from './types.ts';

export interface Position {
  line: number;
  column: number;
}

export interface Located {
  /** The key node of the last path segment, when the segment is a map key. */
  key: Node | null;
  /** The value node at the path, when there is one. */
  value: Node | null;
}

const START: Position = { line: 1, column: 1 };
const OPEN_BRACE = '{'.charCodeAt(0);
const CLOSE_BRACE = '}'.charCodeAt(0);

export class DocumentLocator {
  // A document with a diagnostic on each of thousands of states looks up each path: searching a
  // map's entries for every lookup made that cost grow with the square of the document.
  private readonly pairsByKey = new WeakMap<YAMLMap, Map<string, Pair>>();
  private readonly needlesInScalar = new WeakMap<Node, Map<string, number[]>>();

  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly text: string,
  ) {}

  /** Walks the AST along the path; stops (returning what it has) where the path leaves the tree. */
  find(path: DocPath): { located: Located; depth: number } {
    let current: unknown = this.doc.contents;
    let located: Located = { key: null, value: (current as Node | null) ?? null };
    let depth = 0;
    for (const segment of path) {
      current = this.resolve(current);
      if (isMap(current)) {
        const pair = this.pairOf(current, String(segment));
        if (!pair) break;
        located = { key: (pair.key as Node | null) ?? null, value: (pair.value as Node | null) ?? null };
        current = pair.value;
      } else if (isSeq(current) && typeof segment === 'number') {
        const item = current.items[segment];
        if (item === undefined) break;
        located = { key: null, value: (item as Node | null) ?? null };
        current = item;
      } else {
        break;
      }
      depth++;
    }
    return { located, depth };
  }

  /** Position of the value at `path`, or of its key when `atKey` (or when the value is empty). */
  position(path: DocPath, atKey = false): Position {
    const { located } = this.find(path);
    const node = atKey ? (located.key ?? located.value) : (located.value ?? located.key);
    return this.offsetPosition(node?.range?.[0]);
  }

  /**
   * Position of the `occurrence`-th appearance of `needle` inside the scalar at `path`, found in
   * the source text so block scalars and quoted strings point at the right line and column.
   */
  positionInScalar(path: DocPath, needle: string, occurrence: number): Position {
    const { located } = this.find(path);
    const node = located.value;
    if (!node?.range) return this.position(path);
    const at = this.needleOffsets(node, node.range).get(needle)?.[occurrence];
    return this.offsetPosition(at ?? node.range[0]);
  }

  offsetPosition(offset: number | undefined): Position {
    if (offset === undefined) return START;
    const pos = this.lines.linePos(offset);
    return { line: pos.line, column: pos.col };
  }

  /** The first entry of the map whose key reads `key`, as a search from the start finds it. */
  private pairOf(map: YAMLMap, key: string): Pair | undefined {
    let index = this.pairsByKey.get(map);
    if (!index) {
      index = new Map();
      for (const item of map.items) {
        const text = isPair(item) ? keyText(item.key) : null;
        if (text !== null && !index.has(text)) index.set(text, item);
      }
      this.pairsByKey.set(map, index);
    }
    return index.get(key);
  }

  /**
   * Where each `{…}` without inner braces starts in a scalar's source, by its text: the places a
   * placeholder needle (`{name}`, no braces in the name) can be found, in order. One pass, so a
   * prompt with thousands of placeholders costs its length once, not once per placeholder.
   */
  private needleOffsets(node: Node, range: Range): Map<string, number[]> {
    let found = this.needlesInScalar.get(node);
    if (!found) {
      found = new Map();
      let open = -1;
      for (let i = range[0]; i < range[1]; i++) {
        const char = this.text.charCodeAt(i);
        if (char === OPEN_BRACE) open = i;
        else if (char === CLOSE_BRACE && open >= 0) {
          const needle = this.text.slice(open, i + 1);
          const offsets = found.get(needle);
          if (offsets) offsets.push(open);
          else found.set(needle, [open]);
          open = -1;
        }
      }
      this.needlesInScalar.set(node, found);
    }
    return found;
  }

  private resolve(node: unknown): unknown {
    // An alias stands for its anchor's node; bounded so a cyclic alias cannot loop.
    for (let hops = 0; isAlias(node) && hops < 8; hops++) node = node.resolve(this.doc);
    return node;
  }
}

function keyText(key: unknown): string | null {
  if (isScalar(key)) return String(key.value);
  return null;
}
