// The flow as JSON (visual editor, `GET/PUT /v1/flows/{id}/json`) versus the flow as YAML text
// that a designer also edits by hand. Applying JSON back onto the stored YAML must keep the
// designer's comments, key order and layout wherever the content did not change.
//
// The core step merges the JSON structurally onto a parsed yaml Document (nodes whose content
// is unchanged keep their comments and styles) and renders it. The yaml library cannot
// reproduce every hand-written layout (`[a, b]` comes out as `[ a, b ]`, folded lines are
// joined, aligned comments lose their alignment, ...), so when the untouched Document does not
// render back to the stored text, the edit is carried over as a three-way text merge (stored
// text = ours, rendering before the merge = base, rendering after = theirs), trusted only once
// re-parsing it gives exactly the JSON.
//
// Rendering and parsing a whole 500-state document costs far more than the edit, so the core
// step runs on the smallest pieces of text that changed: a map is compared with the JSON key by
// key, removed entries are cut out with the comments above them, new entries are rendered on
// their own and spliced in, and a changed entry is rewritten by the core step applied to its
// own lines; every piece is checked by parsing it. What cannot be cut into such pieces (aliases,
// keys that do not start their line, an emptied map, `|+` scalars) takes the core step on the
// whole document, checked the same way. A confined edit costs about one parse of the document
// (the library's parse is the floor); the whole-document step about four.
//
// Pure TypeScript: the studio bundles this folder, so no Node APIs here.

import {
  Document,
  Pair,
  Scalar,
  YAMLMap,
  YAMLSeq,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  parseDocument,
  visit,
} from 'yaml';
import type { Alias, Node, ToStringOptions } from 'yaml';
import { MAX_YAML_ALIASES } from '../types.ts';

type Data = null | boolean | number | string | Data[] | DataObject;
interface DataObject {
  [key: string]: Data;
}

// --------------------------------------------------------------------------------------------
// Public API

/** The document as plain data. Throws when the YAML has errors (callers validate first). */
export function yamlToJson(yamlText: string): unknown {
  const doc = parseDocument(yamlText);
  if (doc.errors.length > 0) {
    throw new Error(`The YAML has errors: ${doc.errors.map((e) => e.message).join('; ')}`);
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    throw new Error(`The YAML cannot be converted to JSON: ${errorMessage(error)}`);
  }
}

/** A fresh YAML text for data that has no stored YAML yet. */
export function jsonToYaml(json: unknown): string {
  const doc = new Document();
  const root = freshNode(doc, toData(json, new Set()) ?? null);
  // The library writes a block scalar at the root without indentation, which breaks when the
  // text starts with a space.
  if (isScalar(root) && root.type === Scalar.BLOCK_LITERAL) root.type = Scalar.QUOTE_DOUBLE;
  doc.contents = root;
  return doc.toString(FRESH_OPTIONS);
}

/**
 * The stored YAML with the JSON applied onto it: the result parses to exactly the JSON, and
 * keeps comments, key order and layout wherever the content did not change. Throws only when
 * `yamlText` itself has YAML errors (the API refuses those before calling).
 */
export function applyJsonToYaml(yamlText: string, json: unknown): string {
  const data = toData(json, new Set()) ?? null;
  const envelope = splitEnvelope(yamlText);
  const doc = parseDocument(envelope.body, QUIET);
  if (doc.errors.length > 0) {
    throw new Error(
      `The stored YAML has errors, cannot apply JSON onto it: ${doc.errors.map((e) => e.message).join('; ')}`,
    );
  }
  const root = doc.contents;
  if (!isMap(root)) return jsonToYaml(data);

  // Cheaper than any rendering, and the common case for a studio that saves without edits.
  const before = safeToJS(doc, root);
  if (before.ok && dataEquals(before.value, data)) return yamlText;

  const ours = withFinalNewline(envelope, root);
  const options: ToStringOptions = { ...FRESH_OPTIONS, ...detectOptions(doc, ours) };
  const hasAliases = ours.includes('*') && aliasTargets(doc).size > 0;
  // Entries are checked on their own; an alias reaches outside its entry, and a block scalar
  // that keeps its trailing empty lines (`|+`) takes in the empty lines that follow it.
  if (before.ok && !hasAliases && !KEEP_CHOMPING.test(ours) && isDataObject(data)) {
    const edits = mapEdits(ours, root, before.value as DataObject, data, options);
    const spliced = edits && splice(ours, edits);
    if (edits && spliced !== null) return joinEnvelope(envelope, spliced, endsAsBefore(ours, edits));
  }
  const merged = applyToText(ours, doc, data, (d) => d.toString(options), hasAliases);
  // Rendering flaws of the library that even the plainest styles do not avoid (around explicit
  // `? ` keys): a fresh rendering of the JSON loses the comments but not the data.
  return merged === null ? jsonToYaml(data) : joinEnvelope(envelope, merged, merged === ours);
}

/**
 * The core step: `data` merged onto `doc`, the Document parsed from `ours`, as text checked to
 * hold exactly `data`. `render` writes a Document the way `ours` is laid out. Null when the
 * library does not render the merge correctly even with plain styles for new values.
 */
function applyToText(
  ours: string,
  doc: Document,
  data: Data,
  render: (doc: Document) => string,
  hasAliases: boolean,
  onlyPlain = false,
): string | null {
  for (const plain of onlyPlain ? [true] : [false, true]) {
    // The first attempt mutated the Document.
    const target = plain && !onlyPlain ? parseDocument(ours, QUIET) : doc;
    const base = render(target);
    const ctx = createContext(target, hasAliases, plain);
    target.contents = mergeNode(ctx, target.contents, data);
    repairAliases(ctx);
    if (!ctx.changed) return ours;
    const theirs = render(target);
    const merged = base === ours ? null : mergeTexts(base, ours, theirs, data);
    if (merged !== null) return merged;
    if (holds(theirs, data)) return theirs;
  }
  return null;
}

// --------------------------------------------------------------------------------------------
// Input normalisation

// The editor may hand us objects with `undefined` members or Dates; read them as JSON.stringify
// would, but keep what YAML can hold and JSON cannot (-0, Infinity, NaN) so that the data read
// from a document applies back onto it unchanged. Nothing here throws.
function toData(value: unknown, seen: Set<object>): Data | undefined {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'number':
      return value;
    case 'bigint':
      return Number(value);
    case 'object':
      break;
    default:
      return undefined;
  }
  const object = value as object;
  if (seen.has(object)) return null;
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    let replaced: unknown;
    try {
      replaced = (toJSON as () => unknown).call(object);
    } catch {
      return undefined;
    }
    if (replaced !== object) {
      seen.add(object);
      const result = toData(replaced, seen);
      seen.delete(object);
      return result;
    }
  }
  seen.add(object);
  let result: Data;
  if (Array.isArray(object)) {
    result = object.map((item: unknown) => toData(item, seen) ?? null);
  } else {
    const out: DataObject = {};
    for (const key of Object.keys(object)) {
      const item = toData((object as Record<string, unknown>)[key], seen);
      if (item !== undefined) setOwn(out, key, item);
    }
    result = out;
  }
  seen.delete(object);
  return result;
}

// `out['__proto__'] = x` would set the prototype instead of adding the key.
function setOwn(target: DataObject, key: string, value: Data): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function isDataObject(value: Data | undefined): value is DataObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function dataEquals(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!dataEquals(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  for (const key of ak) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
    if (!dataEquals((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// --------------------------------------------------------------------------------------------
// Rendering

const FRESH_OPTIONS: ToStringOptions = { lineWidth: 0 };

/** For the parses that check work in progress, whose warnings are of no use to anyone. */
const QUIET = { logLevel: 'silent' } as const;

/** A block scalar header that keeps trailing empty lines; may also match inside text. */
const KEEP_CHOMPING = /[|>][1-9]?\+/;

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
function splitEnvelope(text: string): Envelope {
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
function withFinalNewline(envelope: Envelope, root: YAMLMap<unknown, unknown>): string {
  const body = envelope.body;
  if (body === '' || body.endsWith('\n') || endsInBlockScalar(root)) return body;
  envelope.unterminated = true;
  return `${body}\n`;
}

/** Whether the last thing written for `node` is a block scalar (`|` or `>`). */
function endsInBlockScalar(node: unknown): boolean {
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
function joinEnvelope(envelope: Envelope, body: string, sameEnd: boolean): string {
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
function detectOptions(doc: Document, text: string): ToStringOptions {
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

// --------------------------------------------------------------------------------------------
// Edits confined to the entries that changed

interface Edit {
  from: number;
  to: number;
  text: string;
}

/**
 * Edits of `text` that turn the block map `map` (which holds `before`) into one holding
 * `after`, each checked by parsing what it writes; null when a change cannot be confined to
 * whole entries of block maps.
 */
function mapEdits(
  text: string,
  map: YAMLMap<unknown, unknown>,
  before: DataObject,
  after: DataObject,
  options: ToStringOptions,
): Edit[] | null {
  const edits: Edit[] = [];
  const ctx = createContext(new Document(), false); // renames are planned as in mergeMap
  if (!editMap(map, before, after)) return null;
  // Text that keeps its trailing empty lines would take in those of an edit right after it.
  for (const edit of edits) {
    if (KEEP_CHOMPING.test(edit.text) && edits.some((other) => other !== edit && other.from === edit.to)) return null;
  }
  return edits;

  function lineStart(offset: number): number {
    // lastIndexOf takes a negative start as 0, where a line break may be.
    return offset <= 0 ? 0 : text.lastIndexOf('\n', offset - 1) + 1;
  }

  function lineAfter(offset: number): number {
    if (offset === 0 || text[offset - 1] === '\n') return offset;
    const end = text.indexOf('\n', offset);
    return end === -1 ? text.length : end + 1;
  }

  function editMap(node: YAMLMap<unknown, unknown>, was: DataObject, now: DataObject): boolean {
    const items = node.items;
    // Entries are cut and spliced as whole lines, so each key must start its own line, and
    // new entries are indented like the others.
    let column = -1;
    for (const pair of items) {
      const key = pair.key;
      if (!isScalar(key) || !key.range) return false;
      const start = lineStart(key.range[0]);
      if (!/^ *$/.test(text.slice(start, key.range[0]))) return false;
      if (column === -1) column = key.range[0] - start;
      else if (key.range[0] - start !== column) return false;
    }
    if (node.flow || column === -1) return false;

    const plan = planMap(ctx, node, now);
    const renamedPairs = new Set(plan.renamed.values());
    const remaining = items.filter((pair) => plan.kept.has(pair) || renamedPairs.has(pair));
    const fresh = new Map<Slot, string[]>();
    for (const [slot, keys] of plan.inserted) {
      const list = keys.filter((key) => !plan.renamed.has(key));
      if (list.length > 0) fresh.set(slot, list);
    }
    // An emptied map is written `{}` on its parent's line: the parent entry is rewritten.
    if (remaining.length === 0 && fresh.size === 0) return false;

    const mark = edits.length;
    const fail = (): boolean => {
      edits.length = mark;
      return false;
    };
    for (const pair of plan.kept) {
      const key = keyString(pair.key) as string;
      if (dataEquals(was[key], now[key])) continue;
      if (!editEntry(pair, key, key, was[key] as Data, now[key] as Data, column)) return fail();
    }
    for (const [key, pair] of plan.renamed) {
      const oldKey = keyString(pair.key) as string;
      if (!editEntry(pair, oldKey, key, was[oldKey] as Data, now[key] as Data, column)) return fail();
    }
    items.forEach((pair, i) => {
      if (!remaining.includes(pair)) edits.push({ from: entryStart(items, i, column), to: entryEnd(pair, column), text: '' });
    });

    const spaced = mostlySpaced(items);
    for (const [slot, keys] of fresh) {
      let at: number;
      if (slot === START) {
        at = entryStart(items, 0, column);
      } else {
        const next = remaining.find((pair, i) => i > remaining.indexOf(slot) && plan.kept.has(pair));
        at = next ? entryStart(items, items.indexOf(next), column) : entryEnd(items[items.length - 1] as Pair, column);
      }
      const added: DataObject = {};
      for (const key of keys) setOwn(added, key, now[key] as Data);
      let chunk: string | null = null;
      for (const plain of [false, true]) {
        let text = '';
        for (const [j, key] of keys.entries()) {
          text += (spaced && !(slot === START && j === 0) ? '\n' : '') + renderEntry(key, now[key] as Data, column, plain);
        }
        if (holds(text, added) && fitsBefore(text, at, column)) {
          chunk = text;
          break;
        }
      }
      if (chunk === null) return fail();
      // What used to come first is no longer first: it gets the separation the others have.
      if (slot === START && spaced && text[at] !== '\n') chunk += '\n';
      edits.push({ from: at, to: at, text: chunk });
    }
    // What used to come second now comes first: no blank line between it and its parent key.
    const first = remaining[0];
    if (!fresh.has(START) && first && first !== items[0]) {
      const from = entryStart(items, items.indexOf(first), column);
      let to = from;
      while (to < text.length && /^[ \t]*\n/.test(text.slice(to, lineAfter(to + 1)))) to = lineAfter(to + 1);
      if (to > from) edits.push({ from, to, text: '' });
    }
    return true;
  }

  /** Where an entry begins: the comment lines right above its key, and blank lines above those. */
  function entryStart(items: ReadonlyArray<Pair<unknown, unknown>>, index: number, column: number): number {
    const key = (items[index] as Pair<unknown, unknown>).key as Scalar;
    const floor = index > 0 ? entryEnd(items[index - 1] as Pair<unknown, unknown>, column) : 0;
    let start = lineStart((key.range as [number, number, number])[0]);
    while (start > floor) {
      const previous = lineStart(start - 1);
      const line = text.slice(previous, start - 1);
      const first = line.search(/\S/);
      // A deeper comment is about the end of the entry above.
      if (first === -1 || line[first] !== '#' || first > column) break;
      start = previous;
    }
    while (start > floor) {
      const previous = lineStart(start - 1);
      if (!/^[ \t]*$/.test(text.slice(previous, start - 1))) break;
      start = previous;
    }
    return Math.max(start, floor);
  }

  /** Where an entry ends: after its value and the deeper comment lines that follow it. */
  function entryEnd(pair: Pair<unknown, unknown>, column: number): number {
    let end = isNode(pair.key) && pair.key.range ? pair.key.range[2] : 0;
    if (isNode(pair.value) && pair.value.range) end = Math.max(end, pair.value.range[2]);
    end = lineAfter(end);
    // Left behind, they would read as text of a block scalar ending the entry above.
    for (let at = end; at < text.length; ) {
      const next = lineAfter(at + 1);
      const line = text.slice(at, next);
      const first = line.search(/\S/);
      if (first !== -1 && (line[first] !== '#' || first <= column)) break;
      if (first !== -1) end = next;
      at = next;
    }
    return end;
  }

  function editEntry(pair: Pair<unknown, unknown>, oldKey: string, newKey: string, was: Data, now: Data, column: number): boolean {
    const value = pair.value;
    if (oldKey === newKey && isMap(value) && isDataObject(was) && isDataObject(now) && editMap(value, was, now)) {
      return true;
    }
    const key = pair.key as Scalar;
    const from = lineStart((key.range as [number, number, number])[0]);
    const to = entryEnd(pair, column);
    for (const plain of [false, true]) {
      const rewritten = rewriteEntry(text.slice(from, to), column, single(oldKey, was), single(newKey, now), options, plain);
      if (rewritten !== null && fitsBefore(rewritten, to, column)) {
        edits.push({ from, to, text: rewritten });
        return true;
      }
    }
    return false;
  }

  // An entry was checked on its own. What follows it cannot change its meaning unless it ends
  // in a block scalar: then deeper lines would read as more of its text, and so would empty
  // lines if it keeps them (`|+`).
  function fitsBefore(entry: string, at: number, column: number): boolean {
    if (!endsInBlockScalar(parseDocument(entry, QUIET).contents)) return true;
    const keep = KEEP_CHOMPING.test(entry);
    while (at < text.length) {
      const next = lineAfter(at + 1);
      const line = text.slice(at, next).replace(/\n$/, '');
      if (/\S/.test(line)) return indentOf(line) <= column;
      if (keep || line.length > column) return false;
      at = next;
    }
    return true;
  }

  function renderEntry(key: string, value: Data, column: number, plain: boolean): string {
    const doc = new Document();
    const entry = new YAMLMap<unknown, unknown>();
    entry.items.push(new Pair(freshNode(doc, key, plain, true), freshNode(doc, value, plain)));
    doc.contents = entry;
    return indentLines(doc.toString(options), column);
  }
}

/** The core step applied to the lines of one entry, which parse on their own. */
function rewriteEntry(
  lines: string,
  column: number,
  before: DataObject,
  after: DataObject,
  options: ToStringOptions,
  plain: boolean,
): string | null {
  const doc = parseDocument(lines, QUIET);
  const root = doc.contents;
  if (doc.errors.length > 0 || !isMap(root)) return null;
  const was = safeToJS(doc, root);
  if (!was.ok || !dataEquals(was.value, before)) return null;
  // An entry may be laid out unlike the rest of the document (one list unpadded, say).
  const own: ToStringOptions = { ...options, ...detectOptions(doc, lines) };
  return applyToText(lines, doc, after, (d) => indentLines(d.toString(own), column), false, plain);
}

function single(key: string, value: Data): DataObject {
  const object: DataObject = {};
  setOwn(object, key, value);
  return object;
}

function indentLines(text: string, column: number): string {
  if (column === 0) return text;
  const pad = ' '.repeat(column);
  return text
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}

/** Whether the text still ends with a line that is not in a block scalar, as it did. */
function endsAsBefore(text: string, edits: readonly Edit[]): boolean {
  let last: Edit | undefined;
  for (const edit of edits) if (edit.to === text.length && (!last || edit.from >= last.from)) last = edit;
  if (!last) return true;
  return last.text !== '' && !endsInBlockScalar(parseDocument(last.text, QUIET).contents);
}

/** `text` with the edits applied; null if two of them overlap. */
function splice(text: string, edits: Edit[]): string | null {
  const order = edits
    .map((edit, i) => ({ edit, i }))
    .sort((a, b) => a.edit.from - b.edit.from || a.edit.to - b.edit.to || a.i - b.i);
  let out = '';
  let cursor = 0;
  for (const { edit } of order) {
    if (edit.from < cursor) return null;
    out += text.slice(cursor, edit.from) + edit.text;
    cursor = edit.to;
  }
  return out + text.slice(cursor);
}

// --------------------------------------------------------------------------------------------
// Structural merge onto the Document

interface KeptAlias {
  alias: Alias;
  value: unknown;
  replace: (node: Node) => void;
}

interface MergeContext {
  doc: Document;
  /**
   * Write new and changed strings double-quoted: the style the library never gets wrong, and
   * whose meaning does not depend on the lines that follow.
   */
  plain: boolean;
  changed: boolean;
  /** What each alias resolved to before any node was touched. */
  aliasValues: Map<Alias, { ok: true; value: unknown } | { ok: false }>;
  keptAliases: KeptAlias[];
}

function createContext(doc: Document, hasAliases: boolean, plain = false): MergeContext {
  const ctx: MergeContext = { doc, plain, changed: false, aliasValues: new Map(), keptAliases: [] };
  if (!hasAliases) return ctx;
  // Anchored nodes come before their aliases and may be edited before the merge reaches an
  // alias, so the old alias values are taken up front.
  for (const [alias, target] of aliasTargets(doc)) {
    ctx.aliasValues.set(alias, target ? safeToJS(doc, target) : { ok: false });
  }
  return ctx;
}

// Same resolution rule as the library: the last anchor of that name before the alias.
function aliasTargets(doc: Document): Map<Alias, Node | undefined> {
  const targets = new Map<Alias, Node | undefined>();
  const anchors = new Map<string, Node>();
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        targets.set(node, anchors.get(node.source));
      } else if (node.anchor) {
        anchors.set(node.anchor, node);
      }
    },
  });
  return targets;
}

function safeToJS(doc: Document, node: Node): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: node.toJS(doc, { maxAliasCount: MAX_YAML_ALIASES }) };
  } catch {
    return { ok: false };
  }
}

function freshNode(doc: Document, value: Data, plain = false, isKey = false): Node {
  const node = doc.createNode(value, { aliasDuplicateObjects: false }) as Node;
  visit(node, {
    Scalar(key, scalar) {
      if (typeof scalar.value !== 'string') return;
      if (plain) scalar.type = Scalar.QUOTE_DOUBLE;
      // New multi-line text reads best as a block literal, like the prompts designers write.
      else if (key !== 'key' && !isKey && blockable(scalar.value)) scalar.type = Scalar.BLOCK_LITERAL;
    },
  });
  return node;
}

// The library writes a block scalar made only of whitespace as an empty one.
function blockable(text: string): boolean {
  return text.includes('\n') && /\S/.test(text);
}

// A replaced node keeps the comments around it: they are about its place in the document.
function replaceNode(ctx: MergeContext, old: unknown, value: Data, isKey = false): Node {
  ctx.changed = true;
  const node = freshNode(ctx.doc, value, ctx.plain, isKey);
  if (isNode(old)) {
    if (old.commentBefore) node.commentBefore = old.commentBefore;
    if (old.comment) node.comment = old.comment;
    if (old.spaceBefore) node.spaceBefore = true;
  }
  return node;
}

function mergeNode(ctx: MergeContext, old: unknown, value: Data, replace?: (node: Node) => void): Node {
  if (isAlias(old)) return mergeAlias(ctx, old, value, replace);
  if (Array.isArray(value)) {
    if (isSeq(old)) {
      mergeSeq(ctx, old, value);
      return old;
    }
    return replaceNode(ctx, old, value);
  }
  if (isDataObject(value)) {
    if (isMap(old)) {
      mergeMap(ctx, old, value);
      return old;
    }
    return replaceNode(ctx, old, value);
  }
  if (isScalar(old) && updateScalar(ctx, old, value)) return old;
  return replaceNode(ctx, old, value);
}

// An alias stays while it resolves to the value the JSON has there, which is known only once
// every anchored node has been merged: the anchor may have been edited the same way.
function mergeAlias(ctx: MergeContext, alias: Alias, value: Data, replace?: (node: Node) => void): Node {
  if (!replace) return replaceNode(ctx, alias, value);
  ctx.keptAliases.push({ alias, value, replace });
  return alias;
}

// Editing an anchored node, or moving or deleting it, changes what an alias resolves to; an
// alias that no longer resolves to the JSON's value becomes a copy of that value.
function repairAliases(ctx: MergeContext): void {
  if (ctx.keptAliases.length === 0) return;
  const targets = aliasTargets(ctx.doc);
  for (const kept of ctx.keptAliases) {
    if (!targets.has(kept.alias)) continue; // inside a replaced or removed node
    const target = targets.get(kept.alias);
    const now = target ? safeToJS(ctx.doc, target) : { ok: false as const };
    if (!now.ok || !dataEquals(now.value, kept.value)) {
      kept.replace(replaceNode(ctx, kept.alias, kept.value as Data));
    }
  }
}

/** Sets the new value on the node itself so it keeps its style; false when it cannot. */
function updateScalar(ctx: MergeContext, node: Scalar, value: Data): boolean {
  const old = node.value;
  if (Object.is(old, value)) return true;
  if (value === null || old === null || typeof old !== typeof value) return false;
  if (node.tag && !tagFits(node.tag, value)) return false;
  ctx.changed = true;
  node.value = value;
  if (typeof value !== 'string') return true;
  const block = node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED;
  if (ctx.plain || (block && !/\S/.test(value))) {
    node.type = Scalar.QUOTE_DOUBLE;
  } else if (blockable(value) && (!node.type || node.type === Scalar.PLAIN)) {
    // A plain scalar would fold the line breaks away on the next read.
    node.type = Scalar.BLOCK_LITERAL;
  }
  return true;
}

function tagFits(tag: string, value: Data): boolean {
  switch (tag) {
    case 'tag:yaml.org,2002:str':
      return typeof value === 'string';
    case 'tag:yaml.org,2002:int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'tag:yaml.org,2002:float':
      return typeof value === 'number';
    case 'tag:yaml.org,2002:bool':
      return typeof value === 'boolean';
    default:
      return false;
  }
}

// The JSON key a pair produces, as the library's toJS computes it; undefined for keys that
// cannot be matched (collections, aliases), which are then replaced.
function keyString(key: unknown): string | undefined {
  if (key === null || key === undefined) return '';
  if (!isScalar(key)) return undefined;
  const value = key.value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return undefined;
  return String(value);
}

function indexPairs(map: YAMLMap<unknown, unknown>): Map<string, Pair<unknown, unknown>> {
  // Later duplicates win, as in toJS.
  const byKey = new Map<string, Pair<unknown, unknown>>();
  for (const pair of map.items) {
    const key = keyString(pair.key);
    if (key !== undefined) byKey.set(key, pair);
  }
  return byKey;
}

const START = Symbol('start');
type Slot = Pair<unknown, unknown> | typeof START;

/** How the entries of a map line up with the keys of the JSON object. */
interface MapPlan {
  /** Pairs whose key the JSON still has. */
  kept: Set<Pair<unknown, unknown>>;
  /** Pairs whose key the JSON dropped, reused under a new key (see takeRenamed). */
  renamed: Map<string, Pair<unknown, unknown>>;
  /** New keys, by the kept pair they follow (or START). */
  inserted: Map<Slot, string[]>;
}

function planMap(ctx: MergeContext, map: YAMLMap<unknown, unknown>, value: DataObject): MapPlan {
  const byKey = indexPairs(map);
  const keys = Object.keys(value);
  const kept = new Set<Pair<unknown, unknown>>();
  for (const key of keys) {
    const pair = byKey.get(key);
    if (pair) kept.add(pair);
  }
  // A removed pair and a new key that sit between the same kept neighbours, with much the
  // same content, is a rename: reusing the pair keeps the comments inside it.
  const removedBySlot = new Map<Slot, Array<Pair<unknown, unknown>>>();
  let slot: Slot = START;
  for (const pair of map.items) {
    if (kept.has(pair)) {
      slot = pair;
    } else {
      let list = removedBySlot.get(slot);
      if (!list) removedBySlot.set(slot, (list = []));
      list.push(pair);
    }
  }
  const renamed = new Map<string, Pair<unknown, unknown>>();
  const reused = new Set<Pair<unknown, unknown>>();
  const inserted = new Map<Slot, string[]>();
  slot = START;
  for (const key of keys) {
    const existing = byKey.get(key);
    if (existing) {
      slot = existing;
      continue;
    }
    const pair = takeRenamed(ctx, removedBySlot.get(slot), reused, value[key] as Data);
    if (pair) renamed.set(key, pair);
    let list = inserted.get(slot);
    if (!list) inserted.set(slot, (list = []));
    list.push(key);
  }
  return { kept, renamed, inserted };
}

function mergeMap(ctx: MergeContext, map: YAMLMap<unknown, unknown>, value: DataObject): void {
  const oldItems = map.items;
  const { kept, renamed, inserted } = planMap(ctx, map, value);
  for (const pair of kept) {
    const item = value[keyString(pair.key) as string] as Data;
    pair.value = mergeNode(ctx, pair.value, item, (node) => (pair.value = node));
  }
  const newPairs = new Map<Slot, Array<Pair<unknown, unknown>>>();
  for (const [slot, keys] of inserted) {
    newPairs.set(
      slot,
      keys.map((key) => {
        ctx.changed = true;
        const item = value[key] as Data;
        const pair = renamed.get(key);
        if (!pair) return new Pair(freshNode(ctx.doc, key, ctx.plain, true), freshNode(ctx.doc, item, ctx.plain));
        renameKey(ctx, pair, key);
        pair.value = mergeNode(ctx, pair.value, item, (node) => (pair.value = node));
        return pair;
      }),
    );
  }

  const items: Array<Pair<unknown, unknown>> = [...(newPairs.get(START) ?? [])];
  for (const pair of oldItems) {
    if (kept.has(pair)) items.push(pair, ...(newPairs.get(pair) ?? []));
  }
  if (items.length === oldItems.length && items.every((pair, i) => pair === oldItems[i])) return;
  ctx.changed = true;

  const oldFirst = oldItems[0];
  const spaced = mostlySpaced(oldItems);
  for (let i = 0; i < items.length; i++) {
    const pair = items[i] as Pair<unknown, unknown>;
    const key = pair.key;
    if (!isNode(key)) continue;
    if (i === 0) {
      // A blank line would now separate the first key from its parent key.
      if (pair !== oldFirst) key.spaceBefore = undefined;
    } else if (spaced && (!kept.has(pair) || pair === oldFirst)) {
      key.spaceBefore = true;
    }
  }
  const oldFirstStays = oldFirst !== undefined && items.includes(oldFirst);
  moveLeadingComment(map, oldFirst, items[0], oldFirstStays, (pair) => (isNode(pair.key) ? pair.key : null));
  map.items = items;
}

function takeRenamed(
  ctx: MergeContext,
  candidates: Array<Pair<unknown, unknown>> | undefined,
  reused: Set<Pair<unknown, unknown>>,
  value: Data,
): Pair<unknown, unknown> | undefined {
  if (!candidates) return undefined;
  for (const pair of candidates) {
    if (reused.has(pair) || !isScalar(pair.key) || typeof pair.key.value !== 'string') continue;
    if (similar(ctx, pair.value, value)) {
      reused.add(pair);
      return pair;
    }
  }
  return undefined;
}

function renameKey(ctx: MergeContext, pair: Pair<unknown, unknown>, key: string): void {
  const node = pair.key;
  if (!(isScalar(node) && updateScalar(ctx, node, key))) pair.key = replaceNode(ctx, node, key, true);
}

// Half of the entries unchanged is what a renamed state looks like when it also had a
// transition to itself renamed; a deleted state and an unrelated new one share far less.
function similar(ctx: MergeContext, node: unknown, value: Data): boolean {
  if (isMap(node) && isDataObject(value)) {
    const byKey = indexPairs(node);
    let same = 0;
    let union = byKey.size;
    for (const key of Object.keys(value)) {
      const pair = byKey.get(key);
      if (!pair) union++;
      else if (nodeEquals(ctx, pair.value, value[key] as Data)) same++;
    }
    return union === 0 || same * 2 >= union;
  }
  return nodeEquals(ctx, node, value);
}

function nodeEquals(ctx: MergeContext, node: unknown, value: Data): boolean {
  if (node === null || node === undefined) return value === null;
  if (isScalar(node)) return Object.is(node.value, value);
  if (isAlias(node)) {
    const before = ctx.aliasValues.get(node);
    return before?.ok === true && dataEquals(before.value, value);
  }
  if (isSeq(node)) {
    if (!Array.isArray(value) || value.length !== node.items.length) return false;
    return node.items.every((item, i) => nodeEquals(ctx, item, value[i] as Data));
  }
  if (isMap(node)) {
    if (!isDataObject(value)) return false;
    const byKey = indexPairs(node);
    const keys = Object.keys(value);
    if (keys.length !== byKey.size) return false;
    return keys.every((key) => {
      const pair = byKey.get(key);
      return pair !== undefined && nodeEquals(ctx, pair.value, value[key] as Data);
    });
  }
  return false;
}

function mostlySpaced(items: ReadonlyArray<Pair<unknown, unknown>>): boolean {
  let spaced = 0;
  for (let i = 1; i < items.length; i++) {
    const key = (items[i] as Pair<unknown, unknown>).key;
    if (isNode(key) && key.spaceBefore) spaced++;
  }
  return items.length > 1 && spaced * 2 > items.length - 1;
}

// The library hangs the comment above the first entry of a block collection on the collection
// itself; it belongs to that entry, so it follows the entry when something is inserted before
// it, and goes away with it.
function moveLeadingComment<T>(
  collection: YAMLMap<unknown, unknown> | YAMLSeq<unknown>,
  oldFirst: T | undefined,
  newFirst: T | undefined,
  oldFirstKept: boolean,
  holder: (item: T) => Node | null,
): void {
  if (collection.flow || !collection.commentBefore || oldFirst === undefined || oldFirst === newFirst) return;
  const target = oldFirstKept ? holder(oldFirst) : null;
  if (target) {
    target.commentBefore = target.commentBefore
      ? `${collection.commentBefore}\n${target.commentBefore}`
      : collection.commentBefore;
  }
  collection.commentBefore = undefined;
}

function isScalarData(value: Data | undefined): value is null | boolean | number | string {
  return value === null || typeof value !== 'object';
}

function mergeSeq(ctx: MergeContext, seq: YAMLSeq<unknown>, value: Data[]): void {
  const oldItems = seq.items;
  if (oldItems.every((item) => isScalar(item)) && value.every(isScalarData)) {
    mergeScalarSeq(ctx, seq, value);
    return;
  }
  // Entries of a list of maps are positions (steps, options), merged one by one.
  const items: unknown[] = [];
  for (let i = 0; i < value.length; i++) {
    const item = value[i] as Data;
    if (i < oldItems.length) {
      items.push(mergeNode(ctx, oldItems[i], item, (node) => (seq.items[i] = node)));
    } else {
      ctx.changed = true;
      items.push(freshNode(ctx.doc, item, ctx.plain));
    }
  }
  if (oldItems.length > value.length) ctx.changed = true;
  seq.items = items;
}

// A list of names (like `agent.tools`): an entry that is still there keeps its node and its
// comment wherever the JSON moves it.
function mergeScalarSeq(ctx: MergeContext, seq: YAMLSeq<unknown>, value: Array<null | boolean | number | string>): void {
  const oldItems = seq.items as Scalar[];
  const unused = new Map<unknown, number[]>();
  oldItems.forEach((item, i) => {
    const list = unused.get(item.value);
    if (list) list.push(i);
    else unused.set(item.value, [i]);
  });
  const used = new Set<number>();
  const items: unknown[] = value.map((item) => {
    const list = unused.get(item);
    const index = list?.find((i) => !used.has(i) && Object.is((oldItems[i] as Scalar).value, item));
    if (index !== undefined) {
      used.add(index);
      return oldItems[index];
    }
    return freshNode(ctx.doc, item, ctx.plain);
  });
  if (items.length === oldItems.length && items.every((item, i) => item === oldItems[i])) return;
  ctx.changed = true;
  moveLeadingComment(seq, oldItems[0], items[0] as Scalar | undefined, used.has(0), (item) => item);
  seq.items = items;
}

// --------------------------------------------------------------------------------------------
// Three-way text merge

/** Ours with the edit that turned base into theirs, when that provably gives `data`. */
function mergeTexts(base: string, ours: string, theirs: string, data: Data): string | null {
  const ids = new Map<string, number>();
  const intern = (text: string): { lines: string[]; codes: Int32Array } => {
    const lines = text.split('\n');
    const codes = new Int32Array(lines.length);
    lines.forEach((line, i) => {
      let id = ids.get(line);
      if (id === undefined) ids.set(line, (id = ids.size));
      codes[i] = id;
    });
    return { lines, codes };
  };
  const b = intern(base);
  const o = intern(ours);
  const t = intern(theirs);
  const oursHunks = diff(b.codes, o.codes, true, MAX_LINE_EDITS);
  const theirsHunks = diff(b.codes, t.codes, true, MAX_LINE_EDITS);

  const attempt = (fine: boolean): string =>
    merge3(b.lines, o.lines, t.lines, oursHunks, theirsHunks, (baseLines, oursLines, theirsLines) => {
      // Only line for line: merging characters across lines that were split or joined mixes
      // up indentation.
      if (!fine || baseLines.length !== oursLines.length || oursLines.length !== theirsLines.length) {
        return theirsLines;
      }
      const merged: string[] = [];
      for (let i = 0; i < theirsLines.length; i++) {
        const line = mergeChars(baseLines[i] as string, oursLines[i] as string, theirsLines[i] as string);
        const indent = line === null ? -1 : indentOf(line);
        if (indent !== indentOf(oursLines[i] as string) && indent !== indentOf(theirsLines[i] as string)) {
          return theirsLines;
        }
        merged.push(line as string);
      }
      return merged;
    }).join('\n');

  const fine = attempt(true);
  if (fine !== theirs && holds(fine, data)) return fine;
  const coarse = attempt(false);
  if (coarse !== fine && coarse !== theirs && holds(coarse, data)) return coarse;
  return null;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Whether `text` is YAML without errors that holds exactly `data`. */
function holds(text: string, data: Data): boolean {
  const doc = parseDocument(text, QUIET);
  if (doc.errors.length > 0) return false;
  try {
    return dataEquals(doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }), data);
  } catch {
    return false;
  }
}

const MAX_LINE_EDITS = 2000;
const MAX_CHAR_EDITS = 400;
const MAX_CHAR_MERGE_LENGTH = 20_000;

/**
 * Within a line conflict, layout edits and content edits usually touch different characters;
 * where they touch the same ones the content edit wins (the result is verified by the caller).
 */
function mergeChars(base: string, ours: string, theirs: string): string | null {
  if (ours === theirs) return ours;
  if (base.length + ours.length + theirs.length > MAX_CHAR_MERGE_LENGTH) return null;
  const codes = (text: string): Int32Array => {
    const out = new Int32Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  };
  const b = codes(base);
  const o = codes(ours);
  const t = codes(theirs);
  const oursHunks = diff(b, o, false, MAX_CHAR_EDITS);
  const theirsHunks = diff(b, t, false, MAX_CHAR_EDITS);
  return merge3(base.split(''), ours.split(''), theirs.split(''), oursHunks, theirsHunks, (_b, _o, t) => t).join('');
}

/** Base range [aStart, aEnd) became [bStart, bEnd) of the other side. */
interface Hunk {
  aStart: number;
  aEnd: number;
  bStart: number;
  bEnd: number;
}

function merge3<T>(
  base: readonly T[],
  ours: readonly T[],
  theirs: readonly T[],
  oursHunks: readonly Hunk[],
  theirsHunks: readonly Hunk[],
  resolve: (base: T[], ours: T[], theirs: T[]) => T[],
): T[] {
  const out: T[] = [];
  let cursor = 0; // in base
  let oi = 0;
  let ti = 0;
  let oShift = 0; // ours index minus base index after the hunks taken so far
  let tShift = 0;
  while (oi < oursHunks.length || ti < theirsHunks.length) {
    const nextO = oursHunks[oi];
    const nextT = theirsHunks[ti];
    const takeOurs = nextO !== undefined && (nextT === undefined || startsBefore(nextO, nextT));
    const first = (takeOurs ? nextO : nextT) as Hunk;
    const groupO: Hunk[] = [];
    const groupT: Hunk[] = [];
    if (takeOurs) {
      groupO.push(first);
      oi++;
    } else {
      groupT.push(first);
      ti++;
    }
    let start = first.aStart;
    let end = first.aEnd;
    for (;;) {
      const o = oursHunks[oi];
      const t = theirsHunks[ti];
      let added: Hunk;
      if (o && joins(o, start, end)) {
        groupO.push((added = o));
        oi++;
      } else if (t && joins(t, start, end)) {
        groupT.push((added = t));
        ti++;
      } else break;
      start = Math.min(start, added.aStart);
      end = Math.max(end, added.aEnd);
    }
    for (let i = cursor; i < start; i++) out.push(base[i] as T);
    const oDelta = groupO.reduce((sum, h) => sum + (h.bEnd - h.bStart) - (h.aEnd - h.aStart), 0);
    const tDelta = groupT.reduce((sum, h) => sum + (h.bEnd - h.bStart) - (h.aEnd - h.aStart), 0);
    const oursPart = ours.slice(start + oShift, end + oShift + oDelta);
    const theirsPart = theirs.slice(start + tShift, end + tShift + tDelta);
    if (groupT.length === 0) out.push(...oursPart);
    else if (groupO.length === 0) out.push(...theirsPart);
    else out.push(...resolve(base.slice(start, end), oursPart, theirsPart));
    oShift += oDelta;
    tShift += tDelta;
    cursor = end;
  }
  for (let i = cursor; i < base.length; i++) out.push(base[i] as T);
  return out;
}

// An insertion at the start of a change goes before it.
function startsBefore(a: Hunk, b: Hunk): boolean {
  if (a.aStart !== b.aStart) return a.aStart < b.aStart;
  return a.aStart === a.aEnd;
}

// Whether hunk h must be resolved together with the group [start, end): overlapping ranges, or
// two insertions at the same place (their order would be a guess). Touching ranges are fine.
function joins(h: Hunk, start: number, end: number): boolean {
  if (h.aStart < end && start < h.aEnd) return true;
  return h.aStart === h.aEnd && start === end && h.aStart === start;
}

/**
 * The changes from a to b as hunks, in order. Unique common elements anchor the alignment
 * (patience) so that documents with many layout differences stay cheap; between anchors a
 * Myers diff is run, and a gap it cannot solve within maxEdits becomes one hunk, which only
 * makes the merge coarser, never wrong.
 */
function diff(a: Int32Array, b: Int32Array, anchored: boolean, maxEdits: number): Hunk[] {
  const runs: Array<[number, number, number]> = []; // [aIndex, bIndex, length] of equal runs
  let lo = 0;
  while (lo < a.length && lo < b.length && a[lo] === b[lo]) lo++;
  let aHi = a.length;
  let bHi = b.length;
  while (aHi > lo && bHi > lo && a[aHi - 1] === b[bHi - 1]) {
    aHi--;
    bHi--;
  }
  if (lo > 0) runs.push([0, 0, lo]);
  const anchors = anchored ? uniqueAnchors(a, lo, aHi, b, lo, bHi) : [];
  let pa = lo;
  let pb = lo;
  for (const [ai, bi] of [...anchors, [aHi, bHi] as [number, number]]) {
    myers(a, pa, ai, b, pb, bi, maxEdits, runs);
    if (ai < aHi) runs.push([ai, bi, 1]);
    pa = ai + 1;
    pb = bi + 1;
  }
  if (aHi < a.length) runs.push([aHi, bHi, a.length - aHi]);

  const hunks: Hunk[] = [];
  let x = 0;
  let y = 0;
  for (const [ra, rb, length] of [...runs, [a.length, b.length, 0] as [number, number, number]]) {
    if (ra > x || rb > y) hunks.push({ aStart: x, aEnd: ra, bStart: y, bEnd: rb });
    x = ra + length;
    y = rb + length;
  }
  return hunks;
}

function uniqueAnchors(
  a: Int32Array,
  aLo: number,
  aHi: number,
  b: Int32Array,
  bLo: number,
  bHi: number,
): Array<[number, number]> {
  // Per element: count in a, count in b, last index in b.
  const stats = new Map<number, [number, number, number]>();
  for (let i = aLo; i < aHi; i++) {
    const s = stats.get(a[i] as number);
    if (s) s[0]++;
    else stats.set(a[i] as number, [1, 0, -1]);
  }
  for (let j = bLo; j < bHi; j++) {
    const s = stats.get(b[j] as number);
    if (s) {
      s[1]++;
      s[2] = j;
    }
  }
  const pairs: Array<[number, number]> = [];
  for (let i = aLo; i < aHi; i++) {
    const s = stats.get(a[i] as number) as [number, number, number];
    if (s[0] === 1 && s[1] === 1) pairs.push([i, s[2]]);
  }
  // Longest increasing subsequence on the b index (patience sorting).
  const tails: number[] = [];
  const previous = new Int32Array(pairs.length).fill(-1);
  for (let p = 0; p < pairs.length; p++) {
    const bj = (pairs[p] as [number, number])[1];
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((pairs[tails[mid] as number] as [number, number])[1] < bj) low = mid + 1;
      else high = mid;
    }
    if (low > 0) previous[p] = tails[low - 1] as number;
    tails[low] = p;
  }
  const result: Array<[number, number]> = [];
  for (let p = tails.length > 0 ? (tails[tails.length - 1] as number) : -1; p !== -1; p = previous[p] as number) {
    result.push(pairs[p] as [number, number]);
  }
  return result.reverse();
}

/** Appends the equal runs of a[aLo, aHi) and b[bLo, bHi); none when over maxEdits. */
function myers(
  a: Int32Array,
  aLo: number,
  aHi: number,
  b: Int32Array,
  bLo: number,
  bHi: number,
  maxEdits: number,
  runs: Array<[number, number, number]>,
): void {
  const n = aHi - aLo;
  const m = bHi - bLo;
  if (n === 0 || m === 0) return;
  const limit = Math.min(n + m, maxEdits);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= limit; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number))
          ? (v[offset + k + 1] as number)
          : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.push(v.slice(offset - d, offset + d + 1));
    if (found !== -1) break;
  }
  if (found === -1) return;

  const local: Array<[number, number, number]> = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const previous = trace[d - 1] as Int32Array; // index k + (d - 1)
    const k = x - y;
    const at = (kk: number): number => previous[kk + d - 1] as number;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    const startX = prevK === k + 1 ? prevX : prevX + 1;
    const startY = startX - k;
    if (x > startX) local.push([aLo + startX, bLo + startY, x - startX]);
    x = prevX;
    y = prevY;
  }
  if (x > 0) local.push([aLo, bLo, x]);
  for (let i = local.length - 1; i >= 0; i--) runs.push(local[i] as [number, number, number]);
}
