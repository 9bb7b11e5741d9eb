// Text plumbing between the editor's model and CodeMirror: the smallest replacement between two
// texts (so the cursor outside it stays), and line/column to offset for diagnostics.
import { expect, it } from 'vitest';
import { stateKeyLines } from '../../../../../server/flow/graph/analyze.ts';
import { minimalChange, offsetAt } from '../../../../../renderer/src/features/editor/yaml/text-change.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

it('finds the one replacement between two texts', () => {
  expect(minimalChange('abc', 'abc')).toBeNull();
  expect(minimalChange('hello world', 'hello brave world')).toEqual({ from: 6, to: 6, insert: 'brave ' });
  expect(minimalChange('aaa', 'aa')).toEqual({ from: 2, to: 3, insert: '' });
  const change = minimalChange('x: 1\ny: 2\nz: 3\n', 'x: 1\ny: 20\nz: 3\n')!;
  expect(change).toEqual({ from: 9, to: 9, insert: '0' });
});

it('turns a 1-based line and column into an offset, clamped to the line', () => {
  const text = 'ab\ncde\n';
  expect(offsetAt(text, 1, 1)).toBe(0);
  expect(offsetAt(text, 2, 2)).toBe(4);
  expect(offsetAt(text, 2, 99)).toBe(6);
  expect(offsetAt(text, 9, 1)).toBe(text.length);
});

it('finds the line of each state key in the YAML', () => {
  const lines = stateKeyLines(GUESSING_GAME_YAML, ['setup', 'playing', 'won', 'lost']);
  const source = GUESSING_GAME_YAML.split('\n');
  for (const name of ['setup', 'playing', 'won', 'lost']) expect(source[lines[name]! - 1]).toBe(`  ${name}:`);
  expect(stateKeyLines('states:\n  "a b": {}\n  \'c\': {}\n  # note\n  d: {}\nother: 1\n  e: {}\n', ['a b', 'c', 'd', 'e'])).toEqual({ 'a b': 2, c: 3, d: 5 });
});
