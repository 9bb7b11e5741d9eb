// How the entries of a stored map line up with the keys of the JSON object: which entries stay,
// which are renamed (reused under a new key, keeping the comments inside them), and where new
// keys go. Both the document merge and the entry splicing follow the same plan.

import { isAlias, isMap, isScalar, isSeq } from 'yaml';
import type { Pair, YAMLMap } from 'yaml';
import type { MergeContext } from './merge-document.ts';
import { dataEquals, isDataObject, type Data, type DataObject } from './normalize-input.ts';

// The JSON key a pair produces, as the library's toJS computes it; undefined for keys that
// cannot be matched (collections, aliases), which are then replaced.
export function keyString(key: unknown): string | undefined {
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

export const START = Symbol('start');
export type Slot = Pair<unknown, unknown> | typeof START;

/** How the entries of a map line up with the keys of the JSON object. */
interface MapPlan {
  /** Pairs whose key the JSON still has. */
  kept: Set<Pair<unknown, unknown>>;
  /** Pairs whose key the JSON dropped, reused under a new key (see takeRenamed). */
  renamed: Map<string, Pair<unknown, unknown>>;
  /** New keys, by the kept pair they follow (or START). */
  inserted: Map<Slot, string[]>;
}

export function planMap(ctx: MergeContext, map: YAMLMap<unknown, unknown>, value: DataObject): MapPlan {
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
