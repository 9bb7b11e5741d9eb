// Entries added, removed and renamed in a hand-written flow (splice-entries.ts, plan-map.ts):
// a new entry lands where the JSON order says, a removed one takes its comments with it, a
// renamed one keeps its body and comments.

import { describe, expect, it } from 'vitest';
import { applyJsonToYaml } from '../../../server/flow/yaml-edit/index.ts';
import { FLOW, SHIPPED, changes, commentLines, dataOf, insertAfter, lineDiff, type Obj } from './hand-written-flow.ts';

describe('applyJsonToYaml adding, removing and renaming entries of a hand-written flow', () => {
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

  it('renaming every state at once changes only their names, each body and comment staying with its own state', () => {
    const data = dataOf(FLOW);
    const names: Record<string, string> = { welcome: 'start', guessing: 'playing', goodbye: 'end' };
    const states: Obj = {};
    for (const [name, state] of Object.entries(data.states as Obj)) states[names[name] as string] = state;
    data.states = states;
    const out = applyJsonToYaml(FLOW, data);
    expect(dataOf(out)).toEqual(data);
    expect(commentLines(out)).toEqual(commentLines(FLOW));
    expect(changes(FLOW, out)).toEqual({
      removed: ['  welcome:', '  guessing:', '  goodbye:'],
      added: ['  start:', '  playing:', '  end:'],
    });
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
