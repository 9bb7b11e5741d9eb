// Reading YAML as plain data, writing data as fresh YAML, and how the JSON handed to
// applyJsonToYaml is read (normalize-input.ts) before anything is merged.

import { describe, expect, it } from 'vitest';
import { applyJsonToYaml, jsonToYaml, yamlToJson } from '../../../server/flow/yaml-edit/index.ts';
import { FLOW, SHIPPED, dataOf } from './hand-written-flow.ts';

describe('yamlToJson', () => {
  it('reads the document as plain data', () => {
    const data = dataOf(FLOW);
    expect(data.version).toBe('1.0.0');
    expect(data.states.welcome.agent.tools).toEqual(['start_game', 'quit']);
    expect(data.states.welcome.agent.prompt).toBe('Greet the caller and explain the rules.');
    expect(data.states.guessing.agent.prompt).toBe(
      'Guess a number between 1 and {max_number}.\nAsk whether it is higher or lower.\n',
    );
    expect(data.states.welcome.tools.start_game.parameters.max_number).toEqual({ type: 'integer', required: true });
  });

  it('throws an error naming the problem when the YAML has errors', () => {
    expect(() => yamlToJson('a: [1, 2\nb: 3\n')).toThrow(/YAML has errors/);
    expect(() => yamlToJson('a: 1\na: 2\n')).toThrow(/unique/i);
  });

  it('refuses more aliases than the limit instead of expanding them', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]'];
    bomb.push('c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]');
    expect(() => yamlToJson(bomb.join('\n'))).toThrow(/alias/i);
  });
});

describe('jsonToYaml', () => {
  it('writes keys in JSON order, multi-line strings as block literals, long lines unwrapped', () => {
    const long = 'word '.repeat(40).trim();
    const data = { z: 1, a: { prompt: 'one\ntwo\n', text: long }, list: ['x', 'y'] };
    const yaml = jsonToYaml(data);
    expect(yaml).toBe(`z: 1\na:\n  prompt: |\n    one\n    two\n  text: ${long}\nlist:\n  - x\n  - y\n`);
    expect(yamlToJson(yaml)).toEqual(data);
  });

  it('writes a flow that parses back to the same data', () => {
    expect(yamlToJson(jsonToYaml(dataOf(FLOW)))).toEqual(dataOf(FLOW));
    expect(yamlToJson(jsonToYaml(dataOf(SHIPPED)))).toEqual(dataOf(SHIPPED));
  });
});

describe('applyJsonToYaml reading its input', () => {
  it('throws when the stored YAML has errors', () => {
    expect(() => applyJsonToYaml('a: [1\n', { a: 1 })).toThrow(/stored YAML has errors/);
  });

  it('writes a fresh document when the stored text is empty or not a map', () => {
    expect(applyJsonToYaml('', { id: 'x', states: {} })).toBe('id: x\nstates: {}\n');
    expect(applyJsonToYaml('# only a comment\n', { id: 'x' })).toBe('id: x\n');
    expect(applyJsonToYaml('- a\n- b\n', { id: 'x' })).toBe('id: x\n');
  });

  it('reads the JSON the way JSON.stringify would: undefined members are absent', () => {
    const data = { ...dataOf(FLOW), settings: undefined, when: new Date(0) };
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(JSON.parse(JSON.stringify(data)));
    expect(out).not.toContain('settings');
    expect(out).not.toContain('Shared by every state');
  });
});
