import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { Document, Scalar, isNode, isPair, isScalar, parseDocument, visit } from 'yaml';
import { applyJsonToYaml, jsonToYaml, yamlToJson } from '../../server/flow/yaml-edit/index.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';

// A designer's hand-written flow: comments above, beside and below keys, blank lines between
// states, block literals, a folded scalar, quoted strings, flow and block lists, a flow map.
const FLOW = `# Number guessing game.
# The caller thinks of a number; the agent guesses it.
id: guessing-game
version: "1.0.0" # quoted so it stays a string
initial_state: welcome

settings:
  # Shared by every state.
  base_system_prompt: |
    You are a friendly game host.
    Keep every answer short.

states:
  # First contact.
  welcome:
    ui:
      artifact_type: card
      prompt: 'Welcome, {name}!'
    agent:
      prompt: >-
        Greet the caller and
        explain the rules.
      tools: [start_game, quit] # the caller picks
    tools:
      start_game:
        description: The caller wants to play.
        parameters:
          max_number: { type: integer, required: true }
        speech_cue: "Let's go!"
      quit:
        description: The caller wants to stop.
    transitions:
      on_tool_call:
        start_game: guessing
        quit: goodbye

  # The main loop.
  guessing:
    agent:
      prompt: |
        Guess a number between 1 and {max_number}.
        Ask whether it is higher or lower.
      tools:
        - record_answer # higher, lower or correct
        - quit
    tools:
      record_answer:
        description: Record the caller's answer.
        parameters:
          answer:
            type: string
            required: true
      quit:
        description: The caller wants to stop.
    transitions:
      on_tool_call:
        record_answer: guessing # loop until correct
        quit: goodbye

  goodbye:
    agent:
      prompt: Say goodbye.
# end of flow
`;

const SHIPPED = readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

/** The flow as the editor holds it: the document's data as JSON (aliases become copies). */
function dataOf(yaml: string): any {
  return JSON.parse(JSON.stringify(yamlToJson(yaml)));
}

function changes(before: string, after: string): { removed: string[]; added: string[] } {
  const { removed, added } = lineDiff(before, after);
  return { removed, added };
}

function commentLines(text: string): string[] {
  return text.split('\n').filter((line) => line.trimStart().startsWith('#'));
}

/** Lines only in `before` and lines only in `after`, from a longest common subsequence. */
function lineDiff(before: string, after: string): { removed: string[]; added: string[]; removedAt: number[] } {
  const a = before.split('\n');
  const b = after.split('\n');
  // The common head and tail first: the table below is quadratic in what is left.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const aMid = a.slice(head, a.length - tail);
  const bMid = b.slice(head, b.length - tail);
  const lcs: number[][] = Array.from({ length: aMid.length + 1 }, () => new Array<number>(bMid.length + 1).fill(0));
  for (let i = aMid.length - 1; i >= 0; i--) {
    for (let j = bMid.length - 1; j >= 0; j--) {
      lcs[i]![j] = aMid[i] === bMid[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const removedAt: number[] = [];
  const added: string[] = [];
  let i = 0;
  let j = 0;
  while (i < aMid.length && j < bMid.length) {
    if (aMid[i] === bMid[j]) {
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) removedAt.push(head + i++);
    else added.push(bMid[j++]!);
  }
  for (; i < aMid.length; i++) removedAt.push(head + i);
  added.push(...bMid.slice(j));
  return { removed: removedAt.map((k) => a[k]!), added, removedAt };
}

/** Object with the keys in the given order, `value` inserted after `after` (or first). */
function insertAfter(object: Obj, after: string | null, key: string, value: Json): Obj {
  const out: Obj = {};
  if (after === null) out[key] = value;
  for (const [k, v] of Object.entries(object)) {
    out[k] = v;
    if (k === after) out[key] = value;
  }
  return out;
}

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

describe('applyJsonToYaml on a hand-written flow', () => {
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

  it('adding a state keeps every comment and puts the state where the JSON order says', () => {
    const data = dataOf(FLOW);
    const hint = {
      agent: { prompt: 'Give a small hint.\nThen go back to guessing.', tools: ['back'] },
      tools: { back: { description: 'Back to the game.' } },
      transitions: { on_tool_call: { back: 'guessing' } },
    };
    data.states = insertAfter(data.states, 'guessing', 'hint', hint);
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(data);
    expect(Object.keys(dataOf(out).states)).toEqual(['welcome', 'guessing', 'hint', 'goodbye']);
    expect(commentLines(out)).toEqual(commentLines(FLOW));
    expect(changes(FLOW, out).removed).toEqual([]);
    // Separated by a blank line like the other states, multi-line prompt as a block literal.
    expect(out).toContain(
      [
        '        quit: goodbye',
        '',
        '  hint:',
        '    agent:',
        '      prompt: |-',
        '        Give a small hint.',
        '        Then go back to guessing.',
        '      tools:',
        '        - back',
        '    tools:',
        '      back:',
        '        description: Back to the game.',
        '    transitions:',
        '      on_tool_call:',
        '        back: guessing',
        '',
        '  goodbye:',
      ].join('\n'),
    );
    expect(out.indexOf('  hint:')).toBeGreaterThan(out.indexOf('loop until correct'));
    expect(out.indexOf('  hint:')).toBeLessThan(out.indexOf('  goodbye:'));
  });

  it('a new first state goes before the first one, which keeps its comment', () => {
    const data = dataOf(FLOW);
    data.states = insertAfter(data.states, null, 'intro', { agent: { prompt: 'Say hi.' } });
    const out = applyJsonToYaml(FLOW, data);
    expect(Object.keys(dataOf(out).states)).toEqual(['intro', 'welcome', 'guessing', 'goodbye']);
    expect(out).toContain('states:\n  intro:\n    agent:\n      prompt: Say hi.\n\n  # First contact.\n  welcome:\n');
  });

  it('deleting a state removes it with its comments and keeps the comments of the others', () => {
    const data = dataOf(FLOW);
    delete data.states.guessing;
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(data);
    const { removed, added } = lineDiff(FLOW, out);
    expect(added).toEqual([]);
    expect(removed).toContain('  # The main loop.');
    expect(removed).toContain('        record_answer: guessing # loop until correct');
    expect(commentLines(out)).toEqual(commentLines(FLOW).filter((line) => line !== '  # The main loop.'));
    expect(out).toContain('        quit: goodbye\n\n  goodbye:\n');
  });

  it('deleting the first state also removes the comment above it and no blank line is left behind', () => {
    const data = dataOf(FLOW);
    delete data.states.welcome;
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(data);
    expect(out).not.toContain('First contact');
    expect(out).toContain('states:\n  # The main loop.\n  guessing:\n');
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

  it('adding a transition adds just that line', () => {
    const data = dataOf(FLOW);
    data.states.guessing.transitions.on_tool_call.hint = 'welcome';
    const out = applyJsonToYaml(FLOW, data);
    expect(changes(FLOW, out)).toEqual({ removed: [], added: ['        hint: welcome'] });
    expect(out).toContain('        quit: goodbye\n        hint: welcome\n\n  goodbye:');
  });

  it('adding the first transitions of a state adds the whole block under it', () => {
    const data = dataOf(FLOW);
    data.states.goodbye.transitions = { on_tool_call: { restart: 'welcome' } };
    const out = applyJsonToYaml(FLOW, data);
    expect(changes(FLOW, out)).toEqual({
      removed: [],
      added: ['    transitions:', '      on_tool_call:', '        restart: welcome'],
    });
  });

  it('renaming a state keeps its place, body and comments, and the transitions follow', () => {
    const data = dataOf(FLOW);
    const states: Obj = {};
    for (const [name, state] of Object.entries(data.states as Obj)) states[name === 'guessing' ? 'playing' : name] = state;
    data.states = states;
    data.states.welcome.transitions.on_tool_call.start_game = 'playing';
    data.states.playing.transitions.on_tool_call.record_answer = 'playing';
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(data);
    expect(commentLines(out)).toEqual(commentLines(FLOW));
    expect(changes(FLOW, out)).toEqual({
      removed: ['        start_game: guessing', '  guessing:', '        record_answer: guessing # loop until correct'],
      added: ['        start_game: playing', '  playing:', '        record_answer: playing # loop until correct'],
    });
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

  it('edits the shipped guessing-game flow touching only the lines of the edit', () => {
    const data = dataOf(SHIPPED);
    const state = Object.keys(data.states)[1] as string;
    data.states[state].tools.hint = { description: 'Give a hint.' };
    data.states[state].agent.tools.push('hint');
    const out = applyJsonToYaml(SHIPPED, data);
    expect(dataOf(out)).toEqual(data);
    const { removed, added } = lineDiff(SHIPPED, out);
    expect(removed).toHaveLength(1);
    expect(added).toHaveLength(3);
    expect(added[0]).toMatch(/^ {6}tools: \[.*, hint\]$/);
  });
});

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

  it('edits a 500-state document in time proportional to parsing it once', () => {
    const yaml = generateFlowYaml(500);
    const data = dataOf(yaml);
    data.states.s250.agent.prompt = 'A new prompt.';
    data.states.s250.agent.tools.push('extra');
    data.states.s250.tools.extra = { description: 'More.' };
    const out = applyJsonToYaml(yaml, data);
    expect(dataOf(out)).toEqual(data);
    expect(changes(yaml, out).removed).toHaveLength(2);
    // Interleaved, best of three: the machine may be busy with other work.
    let parse = Infinity;
    let apply = Infinity;
    for (let i = 0; i < 3; i++) {
      parse = Math.min(parse, timeOf(() => parseDocument(yaml)));
      apply = Math.min(apply, timeOf(() => applyJsonToYaml(yaml, data)));
    }
    // Rendering and re-parsing the whole document would take two to four parses.
    expect(apply).toBeLessThan(parse * 1.8);
  });
});

function timeOf(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

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

// ---------------------------------------------------------------------------------------------
// Properties

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
      { numRuns: 300 },
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
      { numRuns: 300 },
    );
  });

  it('replacing the flow with any unrelated JSON yields YAML holding exactly that JSON', () => {
    fc.assert(
      fc.property(json, (other) => {
        expect(yamlToJson(applyJsonToYaml(FLOW, other))).toEqual(other);
      }),
      { numRuns: 300 },
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
      { numRuns: 400 },
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
      { numRuns: 400 },
    );
  });

  it('jsonToYaml output parses back to the same data', () => {
    fc.assert(
      fc.property(json, (data) => {
        expect(yamlToJson(jsonToYaml(data))).toEqual(data);
      }),
      { numRuns: 300 },
    );
  });
});
