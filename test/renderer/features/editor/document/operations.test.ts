// Every edit the graph and the inspector make, applied to the guessing game's YAML the way the
// editor applies it: the flow changes as asked, and the designer's comments are still there.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import { yamlToJson } from '../../../../../server/flow/yaml-edit/index.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import * as ops from '../../../../../renderer/src/features/editor/document/operations.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

const COMMENTS = GUESSING_GAME_YAML.split('\n').filter((line) => line.trim().startsWith('#')).map((line) => line.trim());

function edit(change: ops.FlowEdit, text = GUESSING_GAME_YAML) {
  const result = ops.applyEditToText(text, yamlToJson(text) as FlowData, change);
  if (!result) throw new Error('the edit changed nothing');
  return { text: result.text, data: yamlToJson(result.text) as any, diagnostics: parseFlow(result.text).diagnostics };
}

function expectCommentsKept(text: string, except: string[] = []) {
  for (const comment of COMMENTS) if (!except.some((e) => comment.includes(e))) expect(text).toContain(comment);
}

describe('state edits', () => {
  it('adds a state with an empty card and agent prompt, keeping comments', () => {
    const { text, data } = edit((d) => ops.addState(d, 'hint'));
    expect(data.states.hint).toEqual({ ui: { artifact_type: 'card', prompt: '' }, agent: { prompt: '', tools: [] } });
    expect(Object.keys(data.states)).toEqual(['setup', 'playing', 'won', 'lost', 'hint']);
    expectCommentsKept(text);
  });

  it('picks a free name for a new state', () => {
    const data = yamlToJson(GUESSING_GAME_YAML) as FlowData;
    expect(ops.newStateName(data)).toBe('new_state');
    expect(ops.newStateName(ops.addState(data, 'new_state'))).toBe('new_state_2');
  });

  it('renames a state in place and updates the initial state and every transition into it', () => {
    const { text, data, diagnostics } = edit((d) => ops.renameState(d, 'setup', 'lobby'));
    expect(Object.keys(data.states)).toEqual(['lobby', 'playing', 'won', 'lost']);
    expect(data.initial_state).toBe('lobby');
    expect(data.states.won.transitions.on_tool_call.play_again).toBe('lobby');
    expect(data.states.lost.transitions.on_tool_call.play_again).toBe('lobby');
    expect(diagnostics).toEqual([]);
    expectCommentsKept(text);
  });

  it('refuses to rename a state onto an existing name', () => {
    const data = yamlToJson(GUESSING_GAME_YAML) as FlowData;
    expect(ops.renameState(data, 'won', 'lost')).toBe(data);
  });

  it('deletes a state and the transitions into it, whose tools then stay', () => {
    const { text, data, diagnostics } = edit((d) => ops.deleteState(d, 'lost'));
    expect(Object.keys(data.states)).toEqual(['setup', 'playing', 'won']);
    expect(data.states.playing.transitions.on_tool_call).toEqual({ guess_correct: 'won' });
    expect(data.states.playing.agent.tools).toContain('out_of_questions');
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expectCommentsKept(text);
  });

  it('deleting the initial state makes the first remaining state the initial one', () => {
    const { text, data } = edit((d) => ops.deleteState(d, 'setup'));
    expect(data.initial_state).toBe('playing');
    expect(data.states.won.transitions).toBeUndefined();
    // The comment inside the deleted state goes with it; the others stay.
    expectCommentsKept(text, ['Optional so a model', 'a previous round']);
  });

  it('sets the initial state', () => {
    const { text, data } = edit((d) => ops.setInitialState(d, 'playing'));
    expect(data.initial_state).toBe('playing');
    expectCommentsKept(text);
  });

  it('edits the card prompt and the agent prompt', () => {
    const withUi = edit((d) => ops.setUiPrompt(d, 'won', 'Winner!'));
    expect(withUi.data.states.won.ui).toEqual({ artifact_type: 'card', prompt: 'Winner!' });
    expectCommentsKept(withUi.text);
    const withAgent = edit((d) => ops.setAgentPrompt(d, 'won', 'Say well done.\n'));
    expect(withAgent.data.states.won.agent.prompt).toBe('Say well done.\n');
    expectCommentsKept(withAgent.text);
  });
});

describe('tool and transition edits', () => {
  it('adds a new tool with a transition: listed, defined with its description, and moving', () => {
    const { text, data, diagnostics } = edit((d) => ops.addTool(d, 'won', { name: 'show_stats', description: 'Show the stats.', target: 'lost' }));
    expect(data.states.won.agent.tools).toEqual(['play_again', 'show_stats']);
    expect(data.states.won.tools.show_stats).toEqual({ description: 'Show the stats.' });
    expect(data.states.won.transitions.on_tool_call).toEqual({ play_again: 'setup', show_stats: 'lost' });
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expectCommentsKept(text);
  });

  it('gives a staying tool a transition, and takes it away again', () => {
    const moved = edit((d) => ops.setTransition(d, 'playing', 'guess_wrong', 'lost'));
    expect(moved.data.states.playing.transitions.on_tool_call.guess_wrong).toBe('lost');
    expectCommentsKept(moved.text);
    const stays = edit((d) => ops.setTransition(d, 'playing', 'guess_wrong', null), moved.text);
    expect(stays.data.states.playing.transitions.on_tool_call.guess_wrong).toBeUndefined();
    expect(stays.text).toBe(GUESSING_GAME_YAML);
  });

  it('removing the only transition of a state removes the empty transitions block', () => {
    const { data } = edit((d) => ops.setTransition(d, 'won', 'play_again', null));
    expect(data.states.won.transitions).toBeUndefined();
  });

  it('removes a tool from the list, its definition and its transition', () => {
    const { text, data } = edit((d) => ops.removeTool(d, 'playing', 'out_of_questions'));
    expect(data.states.playing.agent.tools).toEqual(['record_answer', 'guess_correct', 'guess_wrong']);
    expect(data.states.playing.tools.out_of_questions).toBeUndefined();
    expect(data.states.playing.transitions.on_tool_call).toEqual({ guess_correct: 'won' });
    expectCommentsKept(text);
  });

  it('renames a tool in the list, the definition and the transition, where each stood', () => {
    const { text, data, diagnostics } = edit((d) => ops.renameTool(d, 'setup', 'begin_game', 'start_game'));
    expect(data.states.setup.agent.tools).toEqual(['start_game']);
    expect(Object.keys(data.states.setup.tools)).toEqual(['start_game']);
    expect(data.states.setup.tools.start_game.speech_cue).toBe("Okay, I've got something in mind. Ask away!");
    expect(data.states.setup.transitions.on_tool_call).toEqual({ start_game: 'playing' });
    expect(diagnostics).toEqual([]);
    expectCommentsKept(text);
  });

  it('edits a description and a speech cue, and removes a cue when emptied', () => {
    const cued = edit((d) => ops.updateTool(d, 'playing', 'record_answer', { description: 'Record it.', speechCue: 'Noted.' }));
    expect(cued.data.states.playing.tools.record_answer.description).toBe('Record it.');
    expect(cued.data.states.playing.tools.record_answer.speech_cue).toBe('Noted.');
    expectCommentsKept(cued.text);
    const uncued = edit((d) => ops.updateTool(d, 'setup', 'begin_game', { speechCue: '' }));
    expect(uncued.data.states.setup.tools.begin_game.speech_cue).toBeUndefined();
    expectCommentsKept(uncued.text);
  });

  it('lists a tool that was only defined', () => {
    const text = GUESSING_GAME_YAML.replace('tools: [play_again]\n    tools:\n      play_again:\n        description: The caller wants another round. Starts a new game.\n        speech_cue: "Great, let\'s go again!"\n    transitions:\n      on_tool_call:\n        play_again: setup\n\n  lost', 'tools: []\n    tools:\n      play_again:\n        description: The caller wants another round. Starts a new game.\n        speech_cue: "Great, let\'s go again!"\n    transitions:\n      on_tool_call:\n        play_again: setup\n\n  lost');
    expect(parseFlow(text).diagnostics.map((d) => d.code)).toContain('transition_from_unlisted_tool');
    const { data, diagnostics } = edit((d) => ops.listTool(d, 'won', 'play_again'), text);
    expect(data.states.won.agent.tools).toEqual(['play_again']);
    expect(diagnostics).toEqual([]);
  });
});

describe('parameter edits', () => {
  it('adds, retypes, renames and removes a parameter, keeping the comment above its neighbour', () => {
    const added = edit((d) => ops.setParameter(d, 'setup', 'begin_game', 'difficulty', { type: 'integer', required: false }));
    expect(added.data.states.setup.tools.begin_game.parameters.difficulty).toEqual({ type: 'integer' });
    expectCommentsKept(added.text);
    const required = edit((d) => ops.setParameter(d, 'setup', 'begin_game', 'difficulty', { type: 'number', required: true }), added.text);
    expect(required.data.states.setup.tools.begin_game.parameters.difficulty).toEqual({ type: 'number', required: true });
    const renamed = edit((d) => ops.renameParameter(d, 'setup', 'begin_game', 'difficulty', 'level'), required.text);
    expect(Object.keys(renamed.data.states.setup.tools.begin_game.parameters)).toEqual(['secret_thing', 'questions_asked', 'level']);
    expectCommentsKept(renamed.text);
    const removed = edit((d) => ops.removeParameter(d, 'setup', 'begin_game', 'level'), renamed.text);
    expect(removed.text).toBe(GUESSING_GAME_YAML);
  });

  it('removing the last parameter removes the parameters map', () => {
    const { data } = edit((d) => ops.removeParameter(d, 'playing', 'guess_wrong', 'wrong_guess'));
    expect(data.states.playing.tools.guess_wrong).toEqual({ description: 'The caller guessed a thing and it is not the secret thing.', speech_cue: "Nope, it's not {wrong_guess}." });
  });
});

describe('flow edits', () => {
  it('edits the id, the version and the base system prompt', () => {
    const versioned = edit((d) => ops.setFlowField(d, 'version', '1.1.0'));
    expect(versioned.data.version).toBe('1.1.0');
    expectCommentsKept(versioned.text);
    const prompted = edit((d) => ops.setBaseSystemPrompt(d, 'Be brief.\n'));
    expect(prompted.data.settings.base_system_prompt).toBe('Be brief.\n');
    expectCommentsKept(prompted.text);
  });

  it('an edit that changes nothing gives nothing to apply', () => {
    const data = yamlToJson(GUESSING_GAME_YAML) as FlowData;
    expect(ops.applyEditToText(GUESSING_GAME_YAML, data, (d) => ops.setInitialState(d, 'setup'))).toBeNull();
    expect(ops.applyEditToText(GUESSING_GAME_YAML, data, (d) => ops.setUiPrompt(d, 'won', data.states && (yamlToJson(GUESSING_GAME_YAML) as any).states.won.ui.prompt))).toBeNull();
  });
});
