// Edits confined to the entries that changed. A block map is compared with the JSON key by key:
// removed entries are cut out with the comments above them, new entries are rendered on their
// own and spliced in, a changed string or a renamed key is set in place by the library's CST
// edit, and any other changed entry is rewritten by the core step applied to its own lines.
// Every piece is checked by parsing it, so a confined edit costs about one parse of the
// document, against about four for the core step on the whole document.

import { Document, Pair, YAMLMap, isMap, isNode, isScalar } from 'yaml';
import type { Scalar, ToStringOptions } from 'yaml';
import { parseYaml } from '../parse-yaml.ts';
import { applyToText } from './apply-to-text.ts';
import {
  KEEP_CHOMPING,
  detectOptions,
  endsInBlockScalar,
  indentLines,
  indentOf,
  mostlySpaced,
} from './detect-layout.ts';
import { editStringInPlace, renameKeyInPlace } from './edit-scalars-in-place.ts';
import { createContext, freshNode } from './merge-document.ts';
import { dataEquals, isDataObject, setOwn, single, type Data, type DataObject } from './normalize-input.ts';
import { START, keyString, planMap, type Slot } from './plan-map.ts';
import { QUIET, holds, safeToJS } from './verify-text.ts';

export interface Edit {
  from: number;
  to: number;
  text: string;
}

/**
 * Edits of `text` that turn the block map `map` (which holds `before`) into one holding
 * `after`, each checked by parsing what it writes; null when a change cannot be confined to
 * whole entries of block maps.
 */
export function mapEdits(
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
    const stays = new Set(remaining);
    items.forEach((pair, i) => {
      if (!stays.has(pair)) edits.push({ from: entryStart(items, i, column), to: entryEnd(pair, column), text: '' });
    });
    // New keys go in front of the next kept entry; looked up once here, not searched per slot,
    // which made adding a key after every state cubic in the number of states.
    const nextKept = new Map<Pair<unknown, unknown>, number>();
    for (let i = items.length - 1, following = -1; i >= 0; i--) {
      const pair = items[i] as Pair<unknown, unknown>;
      nextKept.set(pair, following);
      if (plan.kept.has(pair)) following = i;
    }

    const spaced = mostlySpaced(items);
    for (const [slot, keys] of fresh) {
      let at: number;
      if (slot === START) {
        at = entryStart(items, 0, column);
      } else {
        const next = nextKept.get(slot) ?? -1;
        at = next >= 0 ? entryStart(items, next, column) : entryEnd(items[items.length - 1] as Pair, column);
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
    const key = pair.key as Scalar;
    // A renamed key is set in place on its own line, checked on its own (an implicit key reads
    // the same anywhere); its value is then edited as a kept entry's would be.
    const renamed = oldKey === newKey ? null : renameKeyInPlace(text, key, newKey);
    if (oldKey === newKey || (renamed !== null && holds(`${renamed.text}: null\n`, single(newKey, null)))) {
      const valueDone =
        dataEquals(was, now) || (isMap(value) && isDataObject(was) && isDataObject(now) && editMap(value, was, now));
      if (valueDone) {
        if (renamed !== null) edits.push(renamed);
        return true;
      }
    }
    const from = lineStart((key.range as [number, number, number])[0]);
    const to = entryEnd(pair, column);
    const lines = text.slice(from, to);
    if (oldKey === newKey && isScalar(value) && typeof now === 'string') {
      const edited = wholeLines(lines, editStringInPlace(lines, from, value, now, column + (options.indent ?? 2)));
      // Checked like a rewritten entry: its lines mean on their own what they meant in place.
      const checked =
        edited !== null &&
        holds(lines, single(oldKey, was)) &&
        holds(edited, single(newKey, now)) &&
        fitsBefore(edited, to, column);
      if (checked) {
        edits.push({ from, to, text: edited });
        return true;
      }
    }
    for (const plain of [false, true]) {
      const rewritten = wholeLines(lines, rewriteEntry(lines, column, single(oldKey, was), single(newKey, now), options, plain));
      if (rewritten !== null && holds(rewritten, single(newKey, now)) && fitsBefore(rewritten, to, column)) {
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
    if (!endsInBlockScalar(parseYaml(entry, QUIET).contents)) return true;
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

/**
 * An entry's new text as whole lines, as its old text was: the core step may drop the line
 * break that ended an entry (`key: |` with no text, set to null, came back as `key: null`), and
 * the entry spliced after it then landed on the same line (`key: nullnext: 1`). Callers check
 * the result again, since the line break is part of what the entry means.
 */
function wholeLines(old: string, rewritten: string | null): string | null {
  if (rewritten === null || !old.endsWith('\n') || rewritten.endsWith('\n')) return rewritten;
  return `${rewritten}\n`;
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
  const doc = parseYaml(lines, QUIET);
  const root = doc.contents;
  if (doc.errors.length > 0 || !isMap(root)) return null;
  const was = safeToJS(doc, root);
  if (!was.ok || !dataEquals(was.value, before)) return null;
  // An entry may be laid out unlike the rest of the document (one list unpadded, say).
  const own: ToStringOptions = { ...options, ...detectOptions(doc, lines) };
  return applyToText(lines, doc, after, (d) => indentLines(d.toString(own), column), false, plain);
}

/** Whether the text still ends with a line that is not in a block scalar, as it did. */
export function endsAsBefore(text: string, edits: readonly Edit[]): boolean {
  let last: Edit | undefined;
  for (const edit of edits) if (edit.to === text.length && (!last || edit.from >= last.from)) last = edit;
  if (!last) return true;
  return last.text !== '' && !endsInBlockScalar(parseYaml(last.text, QUIET).contents);
}

/** `text` with the edits applied; null if two of them overlap. */
export function splice(text: string, edits: Edit[]): string | null {
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
