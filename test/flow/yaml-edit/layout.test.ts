// Layouts other than the library's own (detect-layout.ts): what is written follows the stored
// indentation, list style and envelope, and lines the edit does not touch keep their alignment.

import { describe, expect, it } from 'vitest';
import { applyJsonToYaml } from '../../../server/flow/yaml-edit/index.ts';
import { dataOf } from './hand-written-flow.ts';

describe('applyJsonToYaml on other layouts', () => {
  it('keeps a four-space indentation', () => {
    const yaml = 'states:\n    a:\n        tools:\n            - x\n            - y\n    b:\n        agent: {}\n';
    const data = dataOf(yaml);
    data.states.c = { tools: ['z'], deep: { k: 'v' } };
    data.states.a.tools.push('w');
    const out = applyJsonToYaml(yaml, data);
    expect(out).toBe(
      'states:\n    a:\n        tools:\n            - x\n            - y\n            - w\n    b:\n        agent: {}\n' +
        '    c:\n        tools:\n            - z\n        deep:\n            k: v\n',
    );
  });

  it('keeps block lists unindented under their key', () => {
    const yaml = 'a:\n  tools:\n  - x\nb: 1\n';
    const out = applyJsonToYaml(yaml, { a: { tools: ['x', 'y'] }, b: 1, c: { list: ['z'] } });
    expect(out).toBe('a:\n  tools:\n  - x\n  - y\nb: 1\nc:\n  list:\n  - z\n');
  });

  it('keeps a byte-order mark, CRLF line breaks and trailing blank lines', () => {
    const yaml = '\uFEFFa: 1 # one\r\nb: two\r\n\r\n';
    const out = applyJsonToYaml(yaml, { a: 1, b: 'three' });
    expect(out).toBe('\uFEFFa: 1 # one\r\nb: three\r\n\r\n');
  });

  it('keeps a missing final line break missing', () => {
    expect(applyJsonToYaml('a: 1\nb: 2', { a: 1, b: 3 })).toBe('a: 1\nb: 3');
  });

  it('keeps hand alignment of comments on the lines it does not change', () => {
    const yaml = 'a: 1        # first\nbb: [x, y]  # second\nccc: 3      # third\n';
    const out = applyJsonToYaml(yaml, { a: 1, bb: ['x', 'y', 'z'], ccc: 4 });
    expect(out).toBe('a: 1        # first\nbb: [x, y, z]  # second\nccc: 4      # third\n');
  });

  it('an edited block literal keeps its lines as deep as the designer put them', () => {
    const yaml = 'a:\n  prompt: |\n      line one\n      line two\n  b: 1\n';
    const out = applyJsonToYaml(yaml, { a: { prompt: 'line one\nline 2\nline three\n', b: 1 } });
    expect(out).toBe('a:\n  prompt: |\n      line one\n      line 2\n      line three\n  b: 1\n');
  });
});
