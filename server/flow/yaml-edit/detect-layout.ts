// How the stored text is laid out, so that what is written into it looks like its neighbours:
// the envelope the yaml library does not keep (byte-order mark, CRLF, trailing blank lines, a
// missing final line break), the indentation and list styles it has switches for, and whether
// entries are separated by blank lines.

import { Scalar, isMap, isNode, isPair, isScalar, isSeq, visit } from 'yaml';
import type { Document, Pair, ToStringOptions, YAMLMap } from 'yaml';

/** How text with no stored layout to follow is written: long lines are never wrapped. */
export const FRESH_OPTIONS: ToStringOptions = { lineWidth: 0 };

/** A block scalar header that keeps trailing empty lines; may also match inside text. */
export const KEEP_CHOMPING = /[|>][1-9]?\+/;

interface Envelope {
  body: string;
  bom: boolean;
  crlf: boolean;
  /** Blank lines after the last content line, which the library drops. */
  tail: string;
  /** The stored text ends without a line break (the library always writes one). */
  unterminated: boolean;
}

// The yaml library drops a byte-order mark and trailing blank lines and always writes `\n`;
// the work is done on text as the library writes it, and the stored envelope is put back at the
// end, so that such documents still render back to their own text.
export function splitEnvelope(text: string): Envelope {
  const bom = text.startsWith('\uFEFF');
  let body = bom ? text.slice(1) : text;
  const lf = countOf(body, '\n');
  const crlf = lf > 0 && countOf(body, '\r\n') === lf;
  if (crlf) body = body.replaceAll('\r\n', '\n');
  let tail = '';
  // Only empty lines: a line of spaces or tabs may be content of a block scalar, and so are
  // empty lines with keep chomping (`|+`).
  const blank = /\n\n+$/.exec(body);
  if (blank && !KEEP_CHOMPING.test(body)) {
    tail = body.slice(blank.index + 1);
    body = body.slice(0, blank.index + 1);
  }
  return { body, bom, crlf, tail, unterminated: false };
}

// A missing final line break is added while working and taken off at the end, unless the
// document ends in a block scalar, whose value the line break would change.
export function withFinalNewline(envelope: Envelope, root: YAMLMap<unknown, unknown>): string {
  const body = envelope.body;
  if (body === '' || body.endsWith('\n') || endsInBlockScalar(root)) return body;
  envelope.unterminated = true;
  return `${body}\n`;
}

/** Whether the last thing written for `node` is a block scalar (`|` or `>`). */
export function endsInBlockScalar(node: unknown): boolean {
  let last = node;
  while (isMap(last) || isSeq(last)) {
    const item: unknown = last.items[last.items.length - 1];
    last = isPair(item) ? item.value : item;
  }
  return isScalar(last) && (last.type === Scalar.BLOCK_LITERAL || last.type === Scalar.BLOCK_FOLDED);
}

/**
 * `body` in the stored envelope. Trailing blank lines and a missing final line break are only
 * restored when the end of the text is what it was: after new text they could change its
 * meaning (a block scalar there would lose its last line break, or keep the blank lines).
 */
export function joinEnvelope(envelope: Envelope, body: string, sameEnd: boolean): string {
  let joined = body;
  if (sameEnd) {
    joined += envelope.tail;
    if (envelope.unterminated && joined.endsWith('\n')) joined = joined.slice(0, -1);
  }
  const text = envelope.crlf ? joined.replaceAll('\n', '\r\n') : joined;
  return envelope.bom ? `\uFEFF${text}` : text;
}

function countOf(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

// The stored layout, where the library has a switch for it (only what the text shows), so that
// as much as possible renders back to the stored text.
export function detectOptions(doc: Document, text: string): ToStringOptions {
  let indent: number | undefined;
  let seqOffset: number | undefined; // of a block list from its key
  let padded = 0;
  let unpadded = 0;
  const column = (offset: number): number => (offset <= 0 ? 0 : offset - (text.lastIndexOf('\n', offset - 1) + 1));
  // A sample is enough to decide, and the walk is a noticeable share of a large document.
  const decided = (): boolean => indent !== undefined && seqOffset !== undefined && padded + unpadded >= 16;
  visit(doc, {
    Map(_key, map) {
      if (decided()) return visit.BREAK;
      if (map.flow) {
        if (map.items.length > 0 && map.range) countPadding(map.range[0]);
        return undefined;
      }
      if (!map.range || (indent !== undefined && seqOffset !== undefined)) return undefined;
      const mapColumn = column(map.range[0]);
      for (const pair of map.items) {
        const value = pair.value;
        if (!isNode(value) || !value.range) continue;
        if (indent === undefined && isMap(value) && !value.flow && value.items.length > 0) {
          const step = column(value.range[0]) - mapColumn;
          if (step > 0 && step <= 9) indent = step;
        } else if (seqOffset === undefined && isSeq(value) && !value.flow && value.items.length > 0) {
          seqOffset = column(value.range[0]) - mapColumn;
        }
      }
      return undefined;
    },
    Seq(_key, seq) {
      if (decided()) return visit.BREAK;
      if (seq.flow && seq.items.length > 0 && seq.range) countPadding(seq.range[0]);
      return undefined;
    },
  });
  function countPadding(open: number): void {
    const next = text[open + 1];
    if (next === ' ') padded++;
    else if (next !== '\n' && next !== '\r' && next !== undefined) unpadded++;
  }
  const options: ToStringOptions = {};
  if (indent !== undefined) options.indent = indent;
  // The library puts a block list `indent` deeper than its key, or two less without indentSeq.
  const step = indent ?? 2;
  if (seqOffset !== undefined) options.indentSeq = Math.abs(seqOffset - step) <= Math.abs(seqOffset - (step - 2));
  if (unpadded + padded > 0) options.flowCollectionPadding = padded >= unpadded;
  return options;
}

export function indentLines(text: string, column: number): string {
  if (column === 0) return text;
  const pad = ' '.repeat(column);
  return text
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}

export function mostlySpaced(items: ReadonlyArray<Pair<unknown, unknown>>): boolean {
  let spaced = 0;
  for (let i = 1; i < items.length; i++) {
    const key = (items[i] as Pair<unknown, unknown>).key;
    if (isNode(key) && key.spaceBefore) spaced++;
  }
  return items.length > 1 && spaced * 2 > items.length - 1;
}

export function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}
