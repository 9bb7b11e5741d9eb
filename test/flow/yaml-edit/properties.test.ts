// Properties over generated JSON and hand-styled documents: whatever the edit, the YAML written
// holds exactly the edited data, and a text edit touches only the lines of the entries edited.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Document, Scalar, isNode, isPair, isScalar, parseDocument, visit } from 'yaml';
import { applyJsonToYaml, jsonToYaml, yamlToJson } from '../../../server/flow/yaml-edit/index.ts';
import { FLOW, commentLines, dataOf, lineDiff, type Json, type Obj } from './hand-written-flow.ts';
import { scaledRuns } from '../../support/property-runs.ts';


const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'true', '1', '1.50', 'null', '~', '', ' x', 'a: b', '- x', '#c', 'x #y', 'multi\nline', 'trail\n', 'keep\n\n',
      ' lead\nx', 'x\n  ', '---', '...', 'a\n---\nb', '\t', '{x}', '[y]', "'", '"', '*a', '&b', '!t', '%x', 'é ü',
    ),
  },
);
const key = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('states', 'agent', 'tools', 'prompt', '__proto__', '1', 'true', '', '- a', 'a b') },
);
const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(key, tie('json'), { maxKeys: 4, noNullPrototype: true }),
  ),
}));
const object = fc.dictionary(key, json, { maxKeys: 6, noNullPrototype: true });

type EditOp = { path: number[]; op: 'set' | 'delete' | 'insert' | 'rename'; key: string; value: Json };
const edit: fc.Arbitrary<EditOp> = fc.record({
  path: fc.array(fc.nat(), { maxLength: 5 }),
  op: fc.constantFrom('set', 'delete', 'insert', 'rename'),
  key,
  value: json,
});

function define(target: Obj, name: string, value: Json): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** Follows `path` (indices into the keys at each level) and edits what it reaches. */
function applyEdit(root: Json, { path, op, key: name, value }: EditOp): Json {
  let node = root;
  for (const step of path) {
    if (node === null || typeof node !== 'object') break;
    const names = Object.keys(node);
    if (names.length === 0) break;
    const child = (node as Obj)[names[step % names.length] as string] as Json;
    if (child === null || typeof child !== 'object') break;
    node = child;
  }
  if (node === null || typeof node !== 'object') return op === 'set' ? value : root;
  if (Array.isArray(node)) {
    const at = node.length === 0 ? 0 : path.length % node.length;
    if (op === 'delete') node.splice(at, 1);
    else if (op === 'insert' || node.length === 0) node.splice(at, 0, value);
    else node[at] = value;
    return root;
  }
  const names = Object.keys(node);
  const target = names[path.length % Math.max(1, names.length)];
  if (op === 'delete' && target !== undefined) delete node[target];
  else if (op === 'rename' && target !== undefined && !(name in node)) {
    const entries = Object.entries(node).map(([k, v]): [string, Json] => [k === target ? name : k, v]);
    for (const k of names) delete node[k];
    for (const [k, v] of entries) define(node, k, v);
  } else define(node, op === 'set' && target !== undefined ? target : name, value);
  return root;
}

/** A hand-styled rendering of `data`: random styles, comments, blank lines, anchors and spacing. */
function styled(data: Json, seed: number): string {
  let state = seed >>> 0 || 1;
  const random = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const doc = new Document(data, { aliasDuplicateObjects: false });
  let comments = 0;
  const anchored: Array<{ node: object; path: readonly unknown[] }> = [];
  visit(doc, {
    Scalar(_key, node) {
      const styles = [Scalar.PLAIN, Scalar.QUOTE_SINGLE, Scalar.QUOTE_DOUBLE, Scalar.BLOCK_LITERAL, Scalar.BLOCK_FOLDED];
      if (random() < 0.4) node.type = (styles[Math.floor(random() * styles.length)] ?? Scalar.PLAIN) as Scalar.Type;
      if (random() < 0.15) node.comment = ` note ${comments++}`;
    },
    Map(_key, node, path) {
      if (random() < 0.15) node.flow = true;
      if (random() < 0.1) node.commentBefore = ` map ${comments++}`;
      if (random() < 0.1) anchored.push({ node, path });
    },
    Seq(_key, node) {
      if (random() < 0.3) node.flow = true;
      if (random() < 0.1) node.commentBefore = ` list ${comments++}`;
    },
    Pair(_key, pair) {
      if (isNode(pair.key)) {
        if (random() < 0.2) pair.key.commentBefore = ` about ${comments++}`;
        if (random() < 0.2) pair.key.spaceBefore = true;
      }
    },
  });
  // Some later value becomes an alias of an anchored map.
  const first = anchored[0];
  if (first && random() < 0.5) {
    (first.node as { anchor?: string }).anchor = 'shared';
    let seen = false;
    visit(doc, {
      Pair(_key, pair) {
        if (pair.value === first.node) seen = true;
        else if (seen && isScalar(pair.value) && random() < 0.5) {
          pair.value = doc.createAlias(first.node as never, 'shared');
          return visit.SKIP;
        }
        return undefined;
      },
      Map(_key, node) {
        return node === first.node ? visit.SKIP : undefined;
      },
    });
  }
  if (random() < 0.3) doc.comment = ' the end';
  let yaml = doc.toString({
    lineWidth: 0,
    indent: 2 + Math.floor(random() * 3),
    indentSeq: random() < 0.7,
    flowCollectionPadding: random() < 0.5,
  });
  // What people do by hand that the library does not write.
  if (random() < 0.3) yaml = yaml.replace(/ #/g, '    #');
  if (random() < 0.3) yaml = yaml.replace(/\n\n/g, '\n\n\n');
  if (random() < 0.3) yaml = yaml.replace(/\[ /g, '[').replace(/ \]/g, ']');
  if (random() < 0.2) yaml = `${yaml}\n`;
  if (random() < 0.1) yaml = yaml.replaceAll('\n', '\r\n');
  return yaml;
}

function parsesCleanly(yaml: string): boolean {
  try {
    yamlToJson(yaml);
    return parseDocument(yaml).warnings.length === 0;
  } catch {
    return false;
  }
}

const editsOf = (data: Json, edits: EditOp[]): Json => {
  let out = structuredClone(data);
  for (const e of edits) out = applyEdit(out, e);
  return out;
};

/** Every string value under a key in `yaml`, with the line numbers its entry spans. */
function textEntries(yaml: string): Array<{ path: string[]; lines: number[] }> {
  const doc = parseDocument(yaml);
  const lineOf = (offset: number): number => yaml.slice(0, offset).split('\n').length - 1;
  const entries: Array<{ path: string[]; lines: number[] }> = [];
  visit(doc, {
    Pair(_key, pair, ancestors) {
      if (!isScalar(pair.key) || !isScalar(pair.value) || typeof pair.value.value !== 'string') return;
      const path = ancestors.filter(isPair).map((p) => String((p.key as Scalar).value));
      const first = lineOf(pair.key.range![0]);
      const last = lineOf(pair.value.range![2] - 1);
      entries.push({ path: [...path, String(pair.key.value)], lines: Array.from({ length: last - first + 1 }, (_, k) => first + k) });
    },
  });
  return entries;
}

describe('applyJsonToYaml properties', () => {
  it('new texts anywhere in the flow rewrite only the lines of those entries and keep every comment', () => {
    const entries = textEntries(FLOW);
    const inline = FLOW.split('\n').filter((line) => / # /.test(line) && !line.trimStart().startsWith('#'));
    expect(inline).toHaveLength(4);
    fc.assert(
      fc.property(fc.subarray(entries, { minLength: 1, maxLength: 4 }), fc.array(text, { minLength: 4, maxLength: 4 }), (chosen, texts) => {
        const data = dataOf(FLOW);
        chosen.forEach(({ path }, k) => {
          let node = data;
          for (const name of path.slice(0, -1)) node = node[name];
          node[path[path.length - 1] as string] = texts[k];
        });
        const out = applyJsonToYaml(FLOW, data);
        expect(yamlToJson(out)).toEqual(data);
        const allowed = new Set(chosen.flatMap((entry) => entry.lines));
        for (const at of lineDiff(FLOW, out).removedAt) expect(allowed.has(at), `line ${at + 1} changed`).toBe(true);
        // The comments of the edited entries too (a new text may itself hold a line like `#c`).
        for (const line of commentLines(FLOW)) expect(out.split('\n')).toContain(line);
        for (const line of inline) expect(out).toContain(line.slice(line.indexOf(' # ')));
      }),
      { numRuns: scaledRuns(300) },
    );
  });

  it('any edit of the hand-written flow yields YAML holding exactly the edited data, and applying it again changes nothing', () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        const data = editsOf(dataOf(FLOW), edits);
        const out = applyJsonToYaml(FLOW, data);
        expect(yamlToJson(out)).toEqual(data);
        expect(applyJsonToYaml(out, data)).toBe(out);
      }),
      { numRuns: scaledRuns(300) },
    );
  });

  it('replacing the flow with any unrelated JSON yields YAML holding exactly that JSON', () => {
    fc.assert(
      fc.property(json, (other) => {
        expect(yamlToJson(applyJsonToYaml(FLOW, other))).toEqual(other);
      }),
      { numRuns: scaledRuns(300) },
    );
  });

  it('random documents with random edits yield YAML holding exactly the edited data', () => {
    fc.assert(
      fc.property(object, fc.array(edit, { maxLength: 4 }), (start, edits) => {
        const yaml = jsonToYaml(start);
        const data = editsOf(start, edits);
        const out = applyJsonToYaml(yaml, data);
        expect(yamlToJson(out)).toEqual(data);
      }),
      { numRuns: scaledRuns(400) },
    );
  });

  it('hand-styled random documents keep their data right through edits, and unrelated replacements', () => {
    fc.assert(
      fc.property(object, fc.integer(), fc.array(edit, { maxLength: 4 }), object, (start, seed, edits, other) => {
        const yaml = styled(start, seed);
        fc.pre(parsesCleanly(yaml));
        const before = yamlToJson(yaml) as Json;
        expect(applyJsonToYaml(yaml, before)).toBe(yaml);
        const data = editsOf(before, edits);
        const out = applyJsonToYaml(yaml, data);
        expect(yamlToJson(out)).toEqual(data);
        expect(yamlToJson(applyJsonToYaml(yaml, other))).toEqual(other);
      }),
      { numRuns: scaledRuns(400) },
    );
  });

  it('jsonToYaml output parses back to the same data', () => {
    fc.assert(
      fc.property(json, (data) => {
        expect(yamlToJson(jsonToYaml(data))).toEqual(data);
      }),
      { numRuns: scaledRuns(300) },
    );
  });
});
