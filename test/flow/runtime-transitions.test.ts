import { describe, it, expect } from 'vitest';
import { FlowRuntime } from '../../server/flow/runtime.ts';
import type { ToolCallOutcome } from '../../server/flow/runtime.ts';
import type { FlowDocument } from '../../server/flow/types.ts';

// The spec's ten-question guessing game, written as the object the parser would produce.
function guessingGame(): FlowDocument {
  return {
    id: 'ten-questions',
    version: '1.0.0',
    initial_state: 'setup',
    settings: { base_system_prompt: 'You host a guessing game for {player}.' },
    states: {
      setup: {
        ui: { artifact_type: 'card', prompt: 'Think of something, {player}.' },
        agent: { prompt: 'Ask the user to pick a secret thing.', tools: ['begin_game'] },
        tools: {
          begin_game: {
            description: 'Start the game once the secret is chosen.',
            parameters: { secret_thing: { type: 'string', required: true } },
            speech_cue: 'Got it, let us play.',
          },
        },
        transitions: { on_tool_call: { begin_game: 'playing' } },
      },
      playing: {
        ui: { prompt: 'Questions asked: {questions_asked}' },
        agent: {
          prompt: 'The secret is {secret_thing}. Answer yes or no. Asked so far: {questions_asked}.',
          tools: ['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions'],
        },
        tools: {
          record_answer: {
            description: 'Record the answer to a question.',
            parameters: {
              last_answer: { type: 'string', required: true },
              questions_asked: { type: 'string', required: true },
            },
            speech_cue: 'That was question {questions_asked}.',
          },
          guess_correct: { description: 'The user guessed the secret.' },
          guess_wrong: {
            description: 'The user guessed wrong.',
            parameters: { wrong_guess: { type: 'string', required: true } },
            speech_cue: 'No, it is not {wrong_guess}.',
          },
          out_of_questions: { description: 'Ten questions were asked.' },
        },
        transitions: { on_tool_call: { guess_correct: 'won', out_of_questions: 'lost' } },
      },
      won: {
        ui: { artifact_type: 'banner', prompt: 'You found {secret_thing}!' },
        agent: { prompt: 'Congratulate the user.', tools: ['play_again'] },
        tools: { play_again: { description: 'Start over.' } },
        transitions: { on_tool_call: { play_again: 'setup' } },
      },
      lost: {
        ui: { prompt: 'It was {secret_thing}.' },
        agent: { prompt: 'Reveal the secret: {secret_thing}.', tools: ['play_again'] },
        tools: { play_again: { description: 'Start over.' } },
        transitions: { on_tool_call: { play_again: 'setup' } },
      },
    },
  };
}

function expectAccepted(outcome: ToolCallOutcome): Extract<ToolCallOutcome, { status: 'accepted' }> {
  if (outcome.status !== 'accepted') throw new Error(`expected accepted, got ${outcome.code}: ${outcome.reason}`);
  return outcome;
}

function expectRejected(outcome: ToolCallOutcome): Extract<ToolCallOutcome, { status: 'rejected' }> {
  if (outcome.status !== 'rejected') throw new Error(`expected rejected, got accepted into ${outcome.toState}`);
  return outcome;
}

describe('entering the flow', () => {
  it('starts in the initial state with the path holding only it', () => {
    const runtime = new FlowRuntime(guessingGame());
    expect(runtime.state).toBe('setup');
    expect(runtime.path).toEqual(['setup']);
  });

  it('renders context values into the system prompt and the UI prompt', () => {
    const runtime = new FlowRuntime(guessingGame(), { context: { player: 'Ada' } });
    expect(runtime.systemPrompt()).toBe('You host a guessing game for Ada.\n\nAsk the user to pick a secret thing.');
    expect(runtime.uiPrompt()).toBe('Think of something, Ada.');
  });

  it('stores context numbers and booleans as they are, objects as JSON, and ignores null', () => {
    const runtime = new FlowRuntime(guessingGame(), {
      context: { age: 7, premium: false, prefs: { lang: 'en' }, tags: ['a', 'b'], nothing: null, unset: undefined },
    });
    expect(runtime.variables).toEqual({ age: 7, premium: false, prefs: '{"lang":"en"}', tags: '["a","b"]' });
  });

  it('renders a placeholder with no variable as empty text', () => {
    const runtime = new FlowRuntime(guessingGame());
    expect(runtime.systemPrompt()).toBe('You host a guessing game for .\n\nAsk the user to pick a secret thing.');
  });

  it('uses the state prompt alone when there is no base system prompt', () => {
    const document = guessingGame();
    delete document.settings;
    expect(new FlowRuntime(document).systemPrompt()).toBe('Ask the user to pick a secret thing.');
    document.settings = { base_system_prompt: '' };
    expect(new FlowRuntime(document).systemPrompt()).toBe('Ask the user to pick a secret thing.');
  });

  it('keeps doubled braces in prompts as literal braces', () => {
    const document = guessingGame();
    document.states.setup!.agent.prompt = 'Reply as {{"secret": "{player}"}}.';
    const runtime = new FlowRuntime(document, { context: { player: 'Ada' } });
    expect(runtime.systemPrompt().endsWith('Reply as {"secret": "Ada"}.')).toBe(true);
  });

  it('refuses a document whose initial state or transition target does not exist', () => {
    const badInitial = { ...guessingGame(), initial_state: 'nowhere' };
    expect(() => new FlowRuntime(badInitial)).toThrow(/nowhere/);
    const badTarget = guessingGame();
    badTarget.states.won!.transitions = { on_tool_call: { play_again: 'limbo' } };
    expect(() => new FlowRuntime(badTarget)).toThrow(/limbo/);
  });
});

describe('the state-transition table', () => {
  it('moves on a listed tool with a transition and stores its arguments as variables', () => {
    const runtime = new FlowRuntime(guessingGame());
    const outcome = expectAccepted(runtime.applyToolCall('begin_game', '{"secret_thing":"a lighthouse"}'));
    expect(outcome).toMatchObject({
      name: 'begin_game',
      fromState: 'setup',
      toState: 'playing',
      moved: true,
      arguments: { secret_thing: 'a lighthouse' },
    });
    expect(runtime.state).toBe('playing');
    expect(runtime.variables).toEqual({ secret_thing: 'a lighthouse' });
  });

  it('stays on a listed tool without a transition and speaks its cue rendered with the new arguments', () => {
    const runtime = new FlowRuntime(guessingGame());
    runtime.applyToolCall('begin_game', { secret_thing: 'a lighthouse' });
    runtime.beginModelResponse();
    const outcome = expectAccepted(runtime.applyToolCall('guess_wrong', { wrong_guess: 'a boat' }));
    expect(outcome).toMatchObject({ fromState: 'playing', toState: 'playing', moved: false });
    expect(outcome.speechCue).toBe('No, it is not a boat.');
    expect(outcome.result).toEqual({ ok: true, state: 'playing', spoken: 'No, it is not a boat.' });
    expect(runtime.variables).toEqual({ secret_thing: 'a lighthouse', wrong_guess: 'a boat' });
  });

  it('rejects an unlisted tool without moving or storing anything, naming the available tools', () => {
    const runtime = new FlowRuntime(guessingGame());
    const outcome = expectRejected(runtime.applyToolCall('guess_correct', { secret_thing: 'sneaky' }));
    expect(outcome.code).toBe('unlisted_tool');
    expect(outcome.reason).toBe("tool 'guess_correct' is not available in state 'setup'; available tools: begin_game");
    expect(outcome.result).toEqual({ ok: false, error: outcome.reason });
    expect(outcome.toState).toBe('setup');
    expect(runtime.state).toBe('setup');
    expect(runtime.variables).toEqual({});
    expect(runtime.path).toEqual(['setup']);
  });

  it('says that no tools are available in a state that lists none', () => {
    const document = guessingGame();
    delete document.states.won!.agent.tools;
    delete document.states.won!.transitions;
    const runtime = new FlowRuntime({ ...document, initial_state: 'won' });
    const outcome = expectRejected(runtime.applyToolCall('play_again', null));
    expect(outcome.reason).toBe("tool 'play_again' is not available in state 'won'; no tools are available in state 'won'");
    expect(runtime.toolSchemas()).toEqual([]);
  });

  it('does not treat Object.prototype member names as tools or transitions', () => {
    const runtime = new FlowRuntime(guessingGame());
    expect(expectRejected(runtime.applyToolCall('constructor', {})).code).toBe('unlisted_tool');
    const document = guessingGame();
    document.states.setup!.agent.tools = ['toString'];
    document.states.setup!.tools = { toString: { description: 'A tool with an awkward name.' } };
    const awkward = new FlowRuntime(document);
    expect(expectAccepted(awkward.applyToolCall('toString', {})).moved).toBe(false);
    expect(awkward.state).toBe('setup');
  });

  it('treats a transition back to the same state as a stay', () => {
    const document = guessingGame();
    document.states.playing!.transitions!.on_tool_call!.guess_wrong = 'playing';
    const runtime = new FlowRuntime({ ...document, initial_state: 'playing' });
    expect(expectAccepted(runtime.applyToolCall('guess_wrong', { wrong_guess: 'x' })).moved).toBe(false);
    expect(expectAccepted(runtime.applyToolCall('guess_correct', {})).toState).toBe('won');
    expect(runtime.path).toEqual(['playing', 'won']);
  });
});

describe('what the model sees', () => {
  it('replaces the system prompt, the tools and the UI on a state change', () => {
    const runtime = new FlowRuntime(guessingGame(), { context: { player: 'Ada' } });
    expect(runtime.toolSchemas().map((tool) => tool.function.name)).toEqual(['begin_game']);
    runtime.applyToolCall('begin_game', { secret_thing: 'a kite' });
    expect(runtime.systemPrompt()).toBe(
      'You host a guessing game for Ada.\n\nThe secret is a kite. Answer yes or no. Asked so far: .',
    );
    expect(runtime.listedTools()).toEqual(['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions']);
    expect(runtime.snapshot()).toEqual({
      state: 'playing',
      variables: { player: 'Ada', secret_thing: 'a kite' },
      tools: ['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions'],
      prompt: 'Questions asked: ',
      artifact_type: 'card',
    });
  });

  it('gives OpenAI tool schemas of exactly the current state', () => {
    const runtime = new FlowRuntime({ ...guessingGame(), initial_state: 'playing' });
    const schemas = runtime.toolSchemas();
    expect(schemas.map((tool) => tool.function.name)).toEqual([
      'record_answer',
      'guess_correct',
      'guess_wrong',
      'out_of_questions',
    ]);
    expect(schemas[0]).toEqual({
      type: 'function',
      function: {
        name: 'record_answer',
        description: 'Record the answer to a question.',
        parameters: {
          type: 'object',
          properties: { last_answer: { type: 'string' }, questions_asked: { type: 'string' } },
          required: ['last_answer', 'questions_asked'],
          additionalProperties: false,
        },
      },
    });
    expect(schemas[1]?.function.parameters).toEqual({
      type: 'object',
      properties: {},
      required: [],
      additionalProperties: false,
    });
  });

  it('lists a tool listed twice only once', () => {
    const document = guessingGame();
    document.states.setup!.agent.tools = ['begin_game', 'begin_game'];
    const runtime = new FlowRuntime(document);
    expect(runtime.listedTools()).toEqual(['begin_game']);
    expect(runtime.toolSchemas()).toHaveLength(1);
  });

  it('falls back to a card artifact and an empty UI prompt when the state has no ui', () => {
    const document = guessingGame();
    delete document.states.setup!.ui;
    const runtime = new FlowRuntime(document);
    expect(runtime.artifactType()).toBe('card');
    expect(runtime.uiPrompt()).toBe('');
    const won = new FlowRuntime({ ...guessingGame(), initial_state: 'won' });
    expect(won.artifactType()).toBe('banner');
  });

  it('returns a variables copy that later calls do not change', () => {
    const runtime = new FlowRuntime(guessingGame());
    const before = runtime.variables;
    runtime.applyToolCall('begin_game', { secret_thing: 'a kite' });
    expect(before).toEqual({});
    expect(Object.isFrozen(before)).toBe(true);
    expect(runtime.variables).toEqual({ secret_thing: 'a kite' });
  });
});

describe('several tool calls in one model response', () => {
  it('rejects every call after the first move with state_changed', () => {
    const runtime = new FlowRuntime({ ...guessingGame(), initial_state: 'playing' });
    runtime.beginUserTurn();
    runtime.beginModelResponse();
    expect(expectAccepted(runtime.applyToolCall('guess_correct', {})).toState).toBe('won');
    const second = expectRejected(runtime.applyToolCall('play_again', {}));
    expect(second.code).toBe('state_changed');
    expect(second.reason).toBe("the state changed to 'won'; call tools of the new state in your next response");
    expect(second).toMatchObject({ fromState: 'won', toState: 'won' });
    expect(expectRejected(runtime.applyToolCall('guess_wrong', { wrong_guess: 'x' })).code).toBe('state_changed');
    expect(runtime.state).toBe('won');
    expect(runtime.variables).toEqual({});
  });

  it('applies a stay and then a move from the same response', () => {
    const runtime = new FlowRuntime({ ...guessingGame(), initial_state: 'playing' });
    runtime.beginModelResponse();
    expectAccepted(runtime.applyToolCall('record_answer', { last_answer: 'no', questions_asked: '10' }));
    expect(expectAccepted(runtime.applyToolCall('out_of_questions', {})).toState).toBe('lost');
    expect(runtime.path).toEqual(['playing', 'lost']);
  });

  it('accepts calls of the new state in the next response', () => {
    const runtime = new FlowRuntime({ ...guessingGame(), initial_state: 'playing' });
    runtime.beginModelResponse();
    runtime.applyToolCall('guess_correct', {});
    runtime.beginModelResponse();
    expect(expectAccepted(runtime.applyToolCall('play_again', {})).toState).toBe('setup');
  });
});

describe('the tool-round cap per user turn', () => {
  // The engine's loop: one model response per round, each with tool calls until it answers in words.
  function respondWithToolCall(runtime: FlowRuntime): ToolCallOutcome {
    runtime.beginModelResponse();
    return runtime.applyToolCall('guess_wrong', { wrong_guess: 'a guess' });
  }

  it('allows five responses with tool calls and gives the sixth no tools', () => {
    const runtime = new FlowRuntime({ ...guessingGame(), initial_state: 'playing' });
    runtime.beginUserTurn();
    for (let round = 1; round <= 5; round++) {
      runtime.beginModelResponse();
      expect(runtime.toolRoundsLeft).toBe(6 - round);
      expect(runtime.toolSchemas()).toHaveLength(4);
      expect(runtime.applyToolCall('guess_wrong', { wrong_guess: `guess ${round}` }).status).toBe('accepted');
    }
    runtime.beginModelResponse();
    expect(runtime.toolRoundsLeft).toBe(0);
    expect(runtime.toolSchemas()).toEqual([]);
    const sixth = expectRejected(runtime.applyToolCall('guess_correct', {}));
    expect(sixth.code).toBe('round_limit');
    expect(sixth.result.ok).toBe(false);
    expect(runtime.state).toBe('playing');
    expect(runtime.variables).toEqual({ wrong_guess: 'guess 5' });
  });

  it('counts a response whose calls were all rejected as a round', () => {
    const runtime = new FlowRuntime(guessingGame());
    for (let round = 0; round < 5; round++) {
      runtime.beginModelResponse();
      expect(runtime.applyToolCall('invented_tool', {}).status).toBe('rejected');
    }
    runtime.beginModelResponse();
    expect(runtime.toolSchemas()).toEqual([]);
  });

  it('does not count a response without tool calls', () => {
    const runtime = new FlowRuntime({ ...guessingGame(), initial_state: 'playing' });
    runtime.beginModelResponse();
    runtime.beginModelResponse();
    runtime.beginModelResponse();
    expect(runtime.toolRoundsLeft).toBe(5);
  });

  it('starts a new user turn with all rounds available again', () => {
    const runtime = new FlowRuntime({ ...guessingGame(), initial_state: 'playing' });
    runtime.beginUserTurn();
    for (let round = 0; round < 5; round++) respondWithToolCall(runtime);
    expect(expectRejected(respondWithToolCall(runtime)).code).toBe('round_limit');
    runtime.beginUserTurn();
    runtime.beginModelResponse();
    expect(runtime.toolRoundsLeft).toBe(5);
    expect(runtime.toolSchemas()).toHaveLength(4);
    expect(expectAccepted(runtime.applyToolCall('guess_correct', {})).toState).toBe('won');
  });
});

describe('a walk through the ten-question guessing game', () => {
  it('plays a won game, starts over, and loses the next one', () => {
    const runtime = new FlowRuntime(guessingGame(), { context: { player: 'Ada' } });
    // Each step is one user turn with one model response making one tool call.
    const step = (tool: string, args: Record<string, unknown> = {}) => {
      runtime.beginUserTurn();
      runtime.beginModelResponse();
      return expectAccepted(runtime.applyToolCall(tool, args));
    };

    expect(step('begin_game', { secret_thing: 'a lighthouse' }).speechCue).toBe('Got it, let us play.');
    expect(runtime.state).toBe('playing');

    for (let asked = 1; asked <= 3; asked++) {
      const outcome = step('record_answer', { last_answer: asked === 2 ? 'yes' : 'no', questions_asked: asked });
      expect(outcome).toMatchObject({ toState: 'playing', moved: false });
      expect(outcome.speechCue).toBe(`That was question ${asked}.`);
    }
    expect(runtime.uiPrompt()).toBe('Questions asked: 3');
    expect(runtime.variables).toMatchObject({ last_answer: 'no', questions_asked: '3' });

    expect(step('guess_wrong', { wrong_guess: 'a tower' }).speechCue).toBe('No, it is not a tower.');
    expect(runtime.state).toBe('playing');

    expect(step('guess_correct').toState).toBe('won');
    expect(runtime.uiPrompt()).toBe('You found a lighthouse!');
    expect(runtime.listedTools()).toEqual(['play_again']);

    expect(step('play_again').toState).toBe('setup');
    expect(runtime.systemPrompt()).toBe('You host a guessing game for Ada.\n\nAsk the user to pick a secret thing.');

    step('begin_game', { secret_thing: 'a violin' });
    step('record_answer', { last_answer: 'no', questions_asked: '10' });
    expect(step('out_of_questions').toState).toBe('lost');
    expect(runtime.systemPrompt()).toBe('You host a guessing game for Ada.\n\nReveal the secret: a violin.');
    expect(runtime.uiPrompt()).toBe('It was a violin.');

    expect(runtime.path).toEqual(['setup', 'playing', 'won', 'setup', 'playing', 'lost']);
  });
});
