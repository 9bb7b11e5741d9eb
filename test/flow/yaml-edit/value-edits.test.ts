// Values changed in place on a hand-written flow (merge-document.ts, merge-text.ts): a changed
// value keeps its style and the comments around it, lists keep their entries' comments, aliases
// stay while they still hold, and only the lines of the edit change.

import { describe, expect, it } from 'vitest';
import { applyJsonToYaml } from '../../../server/flow/yaml-edit/index.ts';
import { FLOW, SHIPPED, changes, dataOf, lineDiff } from './hand-written-flow.ts';

describe('applyJsonToYaml changing values of a hand-written flow', () => {
  it('gives back the stored text byte for byte when the JSON is the document itself', () => {
    expect(applyJsonToYaml(FLOW, dataOf(FLOW))).toBe(FLOW);
    expect(applyJsonToYaml(SHIPPED, dataOf(SHIPPED))).toBe(SHIPPED);
    const spaced = `\uFEFF${FLOW.replaceAll('\n', '\r\n')}\r\n\r\n`;
    expect(applyJsonToYaml(spaced, dataOf(spaced))).toBe(spaced);
  });

  it('changing one prompt changes exactly that line and nothing else', () => {
    const data = dataOf(FLOW);
    data.states.welcome.ui.prompt = 'Hello {name}, ready to play?';
    const out = applyJsonToYaml(FLOW, data);
    expect(changes(FLOW, out)).toEqual({
      removed: ["      prompt: 'Welcome, {name}!'"],
      added: ["      prompt: 'Hello {name}, ready to play?'"],
    });
    expect(dataOf(out)).toEqual(data);
  });

  it('an edited block-literal prompt stays a block literal and only its changed lines change', () => {
    const data = dataOf(FLOW);
    data.states.guessing.agent.prompt = 'Guess a number between 1 and {max_number}.\nAsk: higher, lower or correct?\n';
    const out = applyJsonToYaml(FLOW, data);
    expect(changes(FLOW, out)).toEqual({
      removed: ['        Ask whether it is higher or lower.'],
      added: ['        Ask: higher, lower or correct?'],
    });
    expect(out).toContain('      prompt: |\n        Guess a number');
  });

  it('a one-line prompt that gains a line break becomes a block literal', () => {
    const data = dataOf(FLOW);
    data.states.goodbye.agent.prompt = 'Say goodbye.\nThank the caller.';
    const out = applyJsonToYaml(FLOW, data);
    expect(out).toContain('      prompt: |-\n        Say goodbye.\n        Thank the caller.\n# end of flow\n');
    expect(dataOf(out)).toEqual(data);
  });

  it('an edited folded prompt changes only its own lines', () => {
    const data = dataOf(FLOW);
    data.states.welcome.agent.prompt = 'Greet the caller warmly.';
    const out = applyJsonToYaml(FLOW, data);
    const { removed, added } = lineDiff(FLOW, out);
    expect(removed).toEqual(['        Greet the caller and', '        explain the rules.']);
    expect(added).toEqual(['        Greet the caller warmly.']);
  });

  it('an edited quoted string keeps its quotes', () => {
    const data = dataOf(FLOW);
    data.states.welcome.tools.start_game.speech_cue = 'Here we go!';
    data.version = '1.1.0';
    const out = applyJsonToYaml(FLOW, data);
    expect(changes(FLOW, out)).toEqual({
      removed: ['version: "1.0.0" # quoted so it stays a string', `        speech_cue: "Let's go!"`],
      added: ['version: "1.1.0" # quoted so it stays a string', '        speech_cue: "Here we go!"'],
    });
  });

  it('adding a tool to a flow-style list keeps the list in flow style with its comment', () => {
    const data = dataOf(FLOW);
    data.states.welcome.agent.tools = ['start_game', 'quit', 'rules'];
    data.states.welcome.tools.rules = { description: 'Explain the rules again.' };
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(data);
    const { removed, added } = lineDiff(FLOW, out);
    expect(removed).toEqual(['      tools: [start_game, quit] # the caller picks']);
    expect(added).toEqual([
      '      tools: [start_game, quit, rules] # the caller picks',
      '      rules:',
      '        description: Explain the rules again.',
    ]);
  });

  it('a block list keeps each entry with its comment when entries are added, removed or reordered', () => {
    const data = dataOf(FLOW);
    data.states.guessing.agent.tools = ['quit', 'hint', 'record_answer'];
    data.states.guessing.tools.hint = { description: 'A hint.' };
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(data);
    expect(out).toContain('      tools:\n        - quit\n        - hint\n        - record_answer # higher, lower or correct\n');

    const fewer = dataOf(FLOW);
    fewer.states.guessing.agent.tools = ['record_answer'];
    const shorter = applyJsonToYaml(FLOW, fewer);
    expect(changes(FLOW, shorter)).toEqual({ removed: ['        - quit'], added: [] });
  });

  it("changing a value's type replaces it and keeps the comment beside it", () => {
    const data = dataOf(FLOW);
    data.version = 2;
    const out = applyJsonToYaml(FLOW, data);
    expect(changes(FLOW, out)).toEqual({
      removed: ['version: "1.0.0" # quoted so it stays a string'],
      added: ['version: 2 # quoted so it stays a string'],
    });

    const listToMap = dataOf(FLOW);
    listToMap.states.welcome.agent.tools = { start_game: true };
    const replaced = applyJsonToYaml(FLOW, listToMap);
    expect(dataOf(replaced)).toEqual(listToMap);
    expect(replaced).toContain('      tools:\n        start_game: true');
  });

  it('replacing the whole document with something unrelated still gives exactly that data', () => {
    const other = { name: 'x', list: [1, 2, { deep: 'yes\nno' }], empty: {}, none: null };
    const out = applyJsonToYaml(FLOW, other);
    expect(dataOf(out)).toEqual(other);
    expect(dataOf(applyJsonToYaml(FLOW, [1, 'two']))).toEqual([1, 'two']);
  });

  it('an alias whose value is unchanged stays an alias, and follows a change to its anchor only when the JSON does', () => {
    const yaml = 'base: &base\n  kind: card # shared\nui: *base\nother: *base\n';
    const keep = dataOf(yaml);
    keep.extra = 1;
    expect(applyJsonToYaml(yaml, keep)).toBe(`${yaml}extra: 1\n`);

    const both = dataOf(yaml);
    for (const key of ['base', 'ui', 'other']) both[key].kind = 'sheet';
    const out = applyJsonToYaml(yaml, both);
    expect(dataOf(out)).toEqual(both);
    expect(out).toContain('ui: *base\nother: *base');

    const onlyAnchor = dataOf(yaml);
    onlyAnchor.base.kind = 'sheet';
    const split = applyJsonToYaml(yaml, onlyAnchor);
    expect(dataOf(split)).toEqual(onlyAnchor);
    expect(split).not.toContain('*base');
  });

  // Found by the hand-styled property (seed -780367779): an empty block scalar set to null came
  // back without its line break, and the entry after it landed on the same line.
  it('a value that was an empty block scalar keeps its own line when it changes type', () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ["'prompt': |\nb: 1\n", { prompt: null, b: 1 }],
      ["a: 1\n'prompt': |\n\n", { a: 1, prompt: null, b: 2 }],
      ['" ": "true"\n# about 0\n\'prompt\': |\n\n', { prompt: null, '!': 'true' }],
      ['prompt: >\nnext: x\n', { prompt: 3, next: 'x' }],
    ];
    for (const [yaml, data] of cases) {
      const out = applyJsonToYaml(yaml, data);
      expect(dataOf(out), JSON.stringify(out)).toEqual(data);
    }
    expect(applyJsonToYaml("'prompt': |\nb: 1\n", { prompt: null, b: 1 })).toBe("'prompt': null\nb: 1\n");
  });
});
