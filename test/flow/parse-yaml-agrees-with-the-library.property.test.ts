// parseYaml finds duplicate keys in one pass instead of the yaml library's pairwise check; what
// it hands back must be what the library's own parse gives: the same errors in the same order at
// the same places, the same warnings and the same data.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { parseYaml } from '../../server/flow/parse-yaml.ts';
import { scaledRuns } from '../support/property-runs.ts';

const problems = (list: ReadonlyArray<{ code: string; message: string; pos: [number, number] }>) =>
  list.map(({ code, message, pos }) => ({ code, message, pos }));

function dataOf(doc: Document): unknown {
  // The library warns on the process about map keys that are collections; these tests mean them.
  doc.options.logLevel = 'error';
  try {
    return { value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (error) {
    return { thrown: String(error) };
  }
}

function expectSameAsTheLibrary(text: string): void {
  const ourLines = new LineCounter();
  const libraryLines = new LineCounter();
  const ours = parseYaml(text, { lineCounter: ourLines, prettyErrors: false, strict: true });
  const library = parseDocument(text, { lineCounter: libraryLines, prettyErrors: false, strict: true, uniqueKeys: true });
  expect(ourLines.lineStarts).toEqual(libraryLines.lineStarts);
  expect(problems(ours.errors)).toEqual(problems(library.errors));
  expect(problems(ours.warnings)).toEqual(problems(library.warnings));
  expect(dataOf(ours)).toEqual(dataOf(library));
  expect(ours.options.uniqueKeys).toBe(true);
}

// Few distinct words, so that keys repeat often, in block and flow maps, with the punctuation
// that makes the library report other errors around them.
const word = fc.constantFrom('a', 'b', '"a"', "'a'", '1', '1.0', '~', '', '&x a', '!!str a', '*x', '? a', '.nan', '<<');
const line = fc.tuple(fc.constantFrom('', '  ', '    ', '- ', '  - '), word, fc.constantFrom(': 1', ':', ': {a: 1, a: 2}', ': [a: 1, b]', ': { a, a }', ' # c', ': |\n  x', ''));
const blocky = fc.array(line, { maxLength: 12 }).map((lines) => lines.map(([indent, key, rest]) => `${indent}${key}${rest}`).join('\n'));
const noise = fc.string({
  unit: fc.constantFrom('a', 'b', ':', ' ', '\n', '-', '[', ']', '{', '}', '"', "'", '&', '*', '!', '#', '|', '>', '\t', '1', '.', ',', '?'),
  maxLength: 120,
});

describe('parseYaml against the yaml library with uniqueKeys', () => {
  it('reports duplicate keys like the library, amid any other error', () => {
    fc.assert(fc.property(blocky, expectSameAsTheLibrary), { numRuns: scaledRuns(3000) });
  });

  it('agrees on random YAML-like text', () => {
    fc.assert(fc.property(noise, expectSameAsTheLibrary), { numRuns: scaledRuns(3000) });
  });

  it('agrees on maps with repeated keys, nested in both styles', () => {
    for (const text of [
      'a: 1\na: 2\n',
      'x:\n  a: 1\n\n  # c\n  a: 2\n',
      '{a: {b: 1, b: 2}, a: 2}',
      'a: {b: 1, b: 2}\na: 3\n',
      '? {a: 1, a: 2}\n: x\n? {a: 1, a: 2}\n: y\n',
      ': 1\n: 2\n',
      '{: 1, : 2}',
      '1: x\n1.0: y\n',
      '.nan: x\n.nan: y\n',
      '- a: 1\n  a: 2\n- {b: 1, b: 1}\n',
    ]) {
      expectSameAsTheLibrary(text);
    }
  });
});
