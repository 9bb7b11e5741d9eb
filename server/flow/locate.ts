// Maps a document path (['states', 'setup', 'agent', 'tools', 0]) to a line and column in the
// YAML text, so every diagnostic can point at the exact place a designer has to fix.
import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';
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

export class DocumentLocator {
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
        const pair = current.items.find((item) => isPair(item) && keyText(item.key) === String(segment));
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
    const source = this.text.slice(node.range[0], node.range[1]);
    let from = 0;
    for (let seen = 0; ; seen++) {
      const at = source.indexOf(needle, from);
      if (at < 0) return this.offsetPosition(node.range[0]);
      if (seen === occurrence) return this.offsetPosition(node.range[0] + at);
      from = at + needle.length;
    }
  }

  offsetPosition(offset: number | undefined): Position {
    if (offset === undefined) return START;
    const pos = this.lines.linePos(offset);
    return { line: pos.line, column: pos.col };
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
