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
  /** Pairs whose key the JSON dropped, reused under a new key (see RenameCandidates). */
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
  const removedBySlot = new Map<Slot, RenameCandidates>();
  let slot: Slot = START;
  for (const pair of map.items) {
    if (kept.has(pair)) {
      slot = pair;
    } else if (isScalar(pair.key) && typeof pair.key.value === 'string') {
      let candidates = removedBySlot.get(slot);
      if (!candidates) removedBySlot.set(slot, (candidates = new RenameCandidates()));
      candidates.pairs.push(pair);
    }
  }
  const renamed = new Map<string, Pair<unknown, unknown>>();
  const inserted = new Map<Slot, string[]>();
  slot = START;
  for (const key of keys) {
    const existing = byKey.get(key);
    if (existing) {
      slot = existing;
      continue;
    }
    const pair = removedBySlot.get(slot)?.take(ctx, value[key] as Data);
    if (pair) renamed.set(key, pair);
    let list = inserted.get(slot);
    if (!list) inserted.set(slot, (list = []));
    list.push(key);
  }
  return { kept, renamed, inserted };
}

/**
 * The removed pairs of one slot, in document order, that its new keys may reuse: each key takes
 * the first one not yet taken that is similar() to its value. similar() needs at least half of
 * the entries equal (or two empty maps, or equal values outright), so each pair is filed under
 * a print of each of its entries, and a value is compared only with the pairs that share enough
 * prints with it. Comparing every new key with every removed pair made replacing all the states
 * of a flow quadratic.
 */
class RenameCandidates {
  readonly pairs: Array<Pair<unknown, unknown>> = [];
  private readonly taken = new Set<number>();
  private filed: { byPrint: Map<string, number[]>; unprinted: number[]; sizes: number[] } | undefined;

  take(ctx: MergeContext, value: Data): Pair<unknown, unknown> | undefined {
    const filed = (this.filed ??= this.file());
    const shared = new Map<number, number>();
    for (const print of valuePrints(value)) {
      for (const i of filed.byPrint.get(print) ?? []) shared.set(i, (shared.get(i) ?? 0) + 1);
    }
    const valueSize = isDataObject(value) ? Object.keys(value).length : 0;
    const plausible = [...filed.unprinted];
    for (const [i, count] of shared) {
      const size = filed.sizes[i] as number; // -1: not a map, its print matched the whole value
      if (size < 0 || count * 2 >= Math.max(size, valueSize)) plausible.push(i);
    }
    plausible.sort((a, b) => a - b);
    for (const i of plausible) {
      const pair = this.pairs[i] as Pair<unknown, unknown>;
      if (this.taken.has(i) || !similar(ctx, pair.value, value)) continue;
      this.taken.add(i);
      return pair;
    }
    return undefined;
  }

  private file(): { byPrint: Map<string, number[]>; unprinted: number[]; sizes: number[] } {
    const byPrint = new Map<string, number[]>();
    const unprinted: number[] = [];
    const sizes: number[] = [];
    this.pairs.forEach((pair, i) => {
      const node = pair.value;
      sizes.push(isMap(node) ? indexPairs(node).size : -1);
      const prints = nodePrints(node);
      if (!prints) unprinted.push(i);
      else for (const print of prints) {
        let list = byPrint.get(print);
        if (!list) byPrint.set(print, (list = []));
        list.push(i);
      }
    });
    return { byPrint, unprinted, sizes };
  }
}

// A print is the same text for a node and a value wherever nodeEquals() holds between them:
// per entry for a map compared with an object (similar() counts equal entries), whole otherwise.

function nodePrints(node: unknown): string[] | undefined {
  if (!isMap(node)) {
    const print = nodePrint(node);
    return print === undefined ? undefined : [`=${print}`];
  }
  const byKey = indexPairs(node);
  if (byKey.size === 0) return ['{}'];
  const prints: string[] = [];
  for (const [key, pair] of byKey) {
    const print = nodePrint(pair.value);
    if (print === undefined) return undefined;
    prints.push(`${JSON.stringify(key)}:${print}`);
  }
  return prints;
}

function valuePrints(value: Data): string[] {
  if (!isDataObject(value)) return [`=${dataPrint(value)}`];
  const keys = Object.keys(value);
  return keys.length === 0 ? ['{}'] : keys.map((key) => `${JSON.stringify(key)}:${dataPrint(value[key] as Data)}`);
}

/** Undefined where only resolving it would tell (an alias); `!` for what equals no JSON value. */
function nodePrint(node: unknown): string | undefined {
  if (node === null || node === undefined) return 'n';
  if (isScalar(node)) {
    const value = node.value;
    const plain = value === null || ['string', 'number', 'boolean'].includes(typeof value);
    return plain ? dataPrint(value as Data) : '!';
  }
  if (isSeq(node)) {
    const items = node.items.map(nodePrint);
    return items.includes(undefined) ? undefined : `[${items.join(',')}]`;
  }
  if (isMap(node)) {
    const entries: string[] = [];
    for (const [key, pair] of [...indexPairs(node)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const print = nodePrint(pair.value);
      if (print === undefined) return undefined;
      entries.push(`${JSON.stringify(key)}:${print}`);
    }
    return `{${entries.join(',')}}`;
  }
  return isAlias(node) ? undefined : '!';
}

function dataPrint(value: Data): string {
  if (value === null) return 'n';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(dataPrint).join(',')}]`;
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((key) => `${JSON.stringify(key)}:${dataPrint(value[key] as Data)}`).join(',')}}`;
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
