import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseFlow } from '../../server/flow/parse.ts';
import { FlowRuntime } from '../../server/flow/runtime.ts';
import type { FlowDocument } from '../../server/flow/types.ts';

const GAME_YAML = readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');

function loadGame(): FlowDocument {
  const { document, diagnostics } = parseFlow(GAME_YAML);
  expect(diagnostics).toEqual([]);
  return document!;
}

/** One model response that makes the given calls, as the engine drives the runtime. */
function respond(game: FlowRuntime, ...calls: Array<[string, Record<string, unknown>?]>) {
  game.beginModelResponse();
  return calls.map(([name, args]) => game.applyToolCall(name, args ?? {}));
}

function askQuestion(game: FlowRuntime, count: number, answer = 'no') {
  game.beginUserTurn();
  const [outcome] = respond(game, ['record_answer', { last_answer: answer, questions_asked: String(count) }]);
  expect(outcome).toMatchObject({ status: 'accepted', moved: false, toState: 'playing' });
}

describe('the ten-question guessing game', () => {
  it('validates with no diagnostics and offers only begin_game at the start', () => {
    const game = new FlowRuntime(loadGame());
    expect(game.state).toBe('setup');
    expect(game.toolSchemas().map((t) => t.function.name)).toEqual(['begin_game']);
    expect(game.systemPrompt()).toContain('host of a ten-question guessing game');
    expect(game.systemPrompt()).toContain('begin_game with it. Never say the secret thing out loud.');
  });

  it('is won when the caller guesses the secret thing, and the card shows it', () => {
    const game = new FlowRuntime(loadGame());
    game.beginUserTurn();
    const [begin] = respond(game, ['begin_game', { secret_thing: 'a giraffe', questions_asked: '0' }]);
    expect(begin).toMatchObject({ status: 'accepted', moved: true, toState: 'playing', speechCue: "Okay, I've got something in mind. Ask away!" });
    expect(game.uiPrompt()).toBe('Ask yes-or-no questions, or name your guess. Questions asked: 0 of 10.');
    expect(game.uiPrompt()).not.toContain('giraffe');
    expect(game.systemPrompt()).toContain('The secret thing is a giraffe.');

    askQuestion(game, 1, 'yes');
    askQuestion(game, 2, 'no');
    game.beginUserTurn();
    const [wrong, counted] = respond(game, ['guess_wrong', { wrong_guess: 'a zebra' }], ['record_answer', { last_answer: 'no', questions_asked: '3' }]);
    expect(wrong).toMatchObject({ status: 'accepted', moved: false, speechCue: "Nope, it's not a zebra." });
    expect(counted).toMatchObject({ status: 'accepted' });
    expect(game.uiPrompt()).toContain('Questions asked: 3 of 10.');

    game.beginUserTurn();
    const [win] = respond(game, ['guess_correct']);
    expect(win).toMatchObject({ status: 'accepted', moved: true, fromState: 'playing', toState: 'won', speechCue: "Yes! That's it!" });
    expect(game.uiPrompt()).toBe('You got it: a giraffe! Found in 3 questions.');
    expect(game.toolSchemas().map((t) => t.function.name)).toEqual(['play_again']);
    expect(game.path).toEqual(['setup', 'playing', 'won']);
  });

  it('is lost after ten questions, reveals the thing, and a new game starts from setup with the count reset', () => {
    const game = new FlowRuntime(loadGame());
    game.beginUserTurn();
    respond(game, ['begin_game', { secret_thing: 'a teapot', questions_asked: '0' }]);
    for (let q = 1; q <= 10; q++) askQuestion(game, q);
    expect(game.uiPrompt()).toContain('Questions asked: 10 of 10.');

    game.beginUserTurn();
    const [lose] = respond(game, ['out_of_questions']);
    expect(lose).toMatchObject({ status: 'accepted', toState: 'lost' });
    expect(game.uiPrompt()).toBe('Out of questions! It was a teapot.');
    expect(game.systemPrompt()).toContain('the secret\nthing was a teapot');

    game.beginUserTurn();
    const [again] = respond(game, ['play_again']);
    expect(again).toMatchObject({ status: 'accepted', toState: 'setup', speechCue: "Great, let's go again!" });
    expect(game.toolSchemas().map((t) => t.function.name)).toEqual(['begin_game']);

    game.beginUserTurn();
    respond(game, ['begin_game', { secret_thing: 'a kite', questions_asked: '0' }]);
    expect(game.uiPrompt()).toContain('Questions asked: 0 of 10.');
    expect(game.systemPrompt()).toContain('The secret thing is a kite.');
    expect(game.path).toEqual(['setup', 'playing', 'lost', 'setup', 'playing']);
  });

  it('does not let the model end the game from setup or skip to a result', () => {
    const game = new FlowRuntime(loadGame());
    game.beginUserTurn();
    const [early] = respond(game, ['guess_correct']);
    expect(early).toMatchObject({ status: 'rejected', code: 'unlisted_tool', toState: 'setup' });
    expect(early?.status === 'rejected' ? early.reason : '').toContain('begin_game');
    const [noSecret] = respond(game, ['begin_game', {}]);
    expect(noSecret).toMatchObject({ status: 'rejected', code: 'missing_argument' });
    expect(game.state).toBe('setup');
    expect(game.variables).toEqual({});
  });
});
