// The structural merge: the JSON merged onto a parsed yaml Document node by node, so that nodes
// whose content is unchanged keep their comments and styles, a changed scalar keeps its style,
// list entries keep their comments wherever they move, and aliases stay while they still
// resolve to what the JSON has there.

import { Document, Pair, Scalar, isAlias, isMap, isNode, isScalar, isSeq, visit } from 'yaml';
import type { Alias, Node, YAMLMap, YAMLSeq } from 'yaml';
import { mostlySpaced } from './detect-layout.ts';
import { dataEquals, isDataObject, isScalarData, type Data, type DataObject } from './normalize-input.ts';
import { START, keyString, planMap, type Slot } from './plan-map.ts';
import { safeToJS } from './verify-text.ts';

interface KeptAlias {
  alias: Alias;
  value: unknown;
  replace: (node: Node) => void;
}

export interface MergeContext {
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

export function createContext(doc: Document, hasAliases: boolean, plain = false): MergeContext {
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
export function aliasTargets(doc: Document): Map<Alias, Node | undefined> {
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

export function freshNode(doc: Document, value: Data, plain = false, isKey = false): Node {
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
export function blockable(text: string): boolean {
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

export function mergeNode(ctx: MergeContext, old: unknown, value: Data, replace?: (node: Node) => void): Node {
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
export function repairAliases(ctx: MergeContext): void {
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

function renameKey(ctx: MergeContext, pair: Pair<unknown, unknown>, key: string): void {
  const node = pair.key;
  if (!(isScalar(node) && updateScalar(ctx, node, key))) pair.key = replaceNode(ctx, node, key, true);
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
