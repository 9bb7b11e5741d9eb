// The test-talk panel's view model over scripted event sequences, in the order the engine sends
// them (server/engine/session.ts): a tool call's `tool_call` comes before the `flow_state` of the
import { SESSION_ERROR_CODES, sessionError } from '../../../../server/protocol/session-errors.ts';
// state it moved to, a barge-in sends `interrupted` and then the agent's words as heard.
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../../../server/protocol/events.ts';
import { describeEndReason } from '../../../../renderer/src/features/talk/session-messages.ts';
import { talkReducer, type TalkAction } from '../../../../renderer/src/features/talk/talk-reducer.ts';
import { initialTalkView, isBusy, isConnected, latencySummary, type TalkView } from '../../../../renderer/src/features/talk/talk-view.ts';

const PROMPTS = {
  setup: 'Ten questions: the host thinks of something, you have ten yes-or-no questions to guess it.',
  playing: (asked: string) => `Ask yes-or-no questions, or name your guess. Questions asked: ${asked} of 10.`,
  won: (thing: string, asked: string) => `You got it: ${thing}! Found in ${asked} questions.`,
};

const PLAYING_TOOLS = ['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions'];

function flowState(state: string, prompt: string, variables: Record<string, string | number | boolean>, tools: string[]): ServerEvent {
  return { type: 'flow_state', state, prompt, artifact_type: 'card', variables, tools };
}

function toolCall(name: string, args: unknown, from: string, to: string, source: 'model' | 'simulator' = 'model'): ServerEvent {
  return { type: 'tool_call', name, arguments: args, status: 'accepted', reason: null, from_state: from, to_state: to, source };
}

function metrics(turn: number, total: number | null, server: number | null, parts: Partial<Record<'endpointing_ms' | 'stt_ms' | 'llm_ttft_ms' | 'tts_ttfb_ms', number>> = {}): ServerEvent {
  return { type: 'metrics', turn, endpointing_ms: null, stt_ms: null, llm_ttft_ms: null, tts_ttfb_ms: null, voice_to_voice_ms: total, server_ms: server, ...parts };
}

const started: ServerEvent = { type: 'session_started', session_id: 'ses_1', mode: 'flow', flow_id: 'flow_1', sample_rate: 16000 };

/** Folds actions from a fresh view; every intermediate view is kept, to check what changed when. */
function run(actions: Array<TalkAction | ServerEvent>, from: TalkView = initialTalkView()): TalkView[] {
  const views = [from];
  let at = 1_000;
  for (const item of actions) {
    const action: TalkAction = isServerEvent(item) ? { type: 'server', event: item, at: (at += 1_000) } : item;
    views.push(talkReducer(views.at(-1)!, action));
  }
  return views;
}

const CLIENT_ACTIONS: ReadonlyArray<string> = ['connect', 'reconnecting', 'reconnected', 'ending', 'server', 'closed', 'failed', 'dismiss', 'cancel', 'clear', 'clear_trace', 'notice'];

function isServerEvent(item: TalkAction | ServerEvent): item is ServerEvent {
  return !CLIENT_ACTIONS.includes(item.type);
}

const last = (views: TalkView[]) => views.at(-1)!;

describe('the guessing game walked setup → playing → won', () => {
  const views = run([
    { type: 'connect', textOnly: false },
    started,
    flowState('setup', PROMPTS.setup, {}, ['begin_game']),
    { type: 'transcript', role: 'agent', text: "Welcome to ten questions! Tell me when you're ready.", final: true },
    { type: 'user_started_speaking' },
    { type: 'user_stopped_speaking' },
    { type: 'transcript', role: 'user', text: "I'm ready", final: true },
    toolCall('begin_game', { secret_thing: 'a cat', questions_asked: '0' }, 'setup', 'playing'),
    { type: 'transcript', role: 'agent', text: "Okay, I've got something in mind. Ask away!", final: true },
    flowState('playing', PROMPTS.playing('0'), { secret_thing: 'a cat', questions_asked: '0' }, PLAYING_TOOLS),
    toolCall('record_answer', { last_answer: 'yes', questions_asked: '1' }, 'playing', 'playing'),
    flowState('playing', PROMPTS.playing('1'), { secret_thing: 'a cat', questions_asked: '1', last_answer: 'yes' }, PLAYING_TOOLS),
    toolCall('guess_correct', {}, 'playing', 'won', 'simulator'),
    flowState('won', PROMPTS.won('a cat', '1'), { secret_thing: 'a cat', questions_asked: '1', last_answer: 'yes' }, ['play_again']),
  ]);
  const view = last(views);

  it('is live from session_started, with the running session identified', () => {
    expect(views[1]!.connection).toBe('connecting');
    expect(views[1]!.overlay.live).toBe(false);
    expect(views[2]!.connection).toBe('live');
    expect(views[2]!.overlay.live).toBe(true);
    expect(view.sessionId).toBe('ses_1');
    expect(view.startedAt).toBe(2_000);
    expect(isConnected(view) && isBusy(view)).toBe(true);
  });

  it('shows the current state with its rendered card and tools', () => {
    expect(views[3]!.state).toEqual({ name: 'setup', prompt: PROMPTS.setup, artifactType: 'card', tools: ['begin_game'] });
    expect(view.state).toEqual({ name: 'won', prompt: 'You got it: a cat! Found in 1 questions.', artifactType: 'card', tools: ['play_again'] });
  });

  it('lights up each state as it is entered and traces the path, stays excluded', () => {
    expect(views[3]!.overlay).toEqual({ live: true, activeState: 'setup', trail: ['setup'], moves: [], lastMove: null });
    // The move shows as soon as the tool call is accepted, before the new state's flow_state.
    expect(views[8]!.overlay).toEqual({ live: true, activeState: 'playing', trail: ['setup', 'playing'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }], lastMove: { from: 'setup', to: 'playing', tool: 'begin_game' } });
    // A stay is a call on the self-loop, without a new trail entry.
    expect(views[11]!.overlay).toEqual({ live: true, activeState: 'playing', trail: ['setup', 'playing'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }, { from: 'playing', to: 'playing', tool: 'record_answer' }], lastMove: { from: 'playing', to: 'playing', tool: 'record_answer' } });
    expect(view.overlay).toEqual({ live: true, activeState: 'won', trail: ['setup', 'playing', 'won'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }, { from: 'playing', to: 'playing', tool: 'record_answer' }, { from: 'playing', to: 'won', tool: 'guess_correct' }], lastMove: { from: 'playing', to: 'won', tool: 'guess_correct' } });
  });

  it('keeps the overlay object when nothing about it changed, so the graph is not redrawn for a transcript line', () => {
    expect(views[4]!.overlay).toBe(views[3]!.overlay);
    expect(views[10]!.overlay).toBe(views[9]!.overlay); // playing's flow_state after the move to playing
  });

  it('logs every call with its arguments, its move and who made it', () => {
    expect(view.toolCalls.map((c) => [c.name, c.status, c.from, c.to, c.source])).toEqual([
      ['begin_game', 'accepted', 'setup', 'playing', 'model'],
      ['record_answer', 'accepted', 'playing', 'playing', 'model'],
      ['guess_correct', 'accepted', 'playing', 'won', 'simulator'],
    ]);
    expect(view.toolCalls[0]!.arguments).toEqual({ secret_thing: 'a cat', questions_asked: '0' });
  });

  it('keeps the variables and marks what the last step changed', () => {
    expect(views[10]!.variables).toEqual({ secret_thing: 'a cat', questions_asked: '0' });
    expect(views[10]!.changedVariables).toEqual(['secret_thing', 'questions_asked']);
    expect(views[12]!.changedVariables).toEqual(['questions_asked', 'last_answer']);
    expect(view.changedVariables).toEqual([]);
  });

  it('keeps the transcript in order and follows what is happening', () => {
    expect(view.transcript.map((l) => `${l.role}: ${l.text}`)).toEqual([
      "agent: Welcome to ten questions! Tell me when you're ready.",
      "user: I'm ready",
      "agent: Okay, I've got something in mind. Ask away!",
    ]);
    expect(views[5]!.activity).toBe('listening');
    expect(views[6]!.activity).toBe('thinking');
  });

  it('ends: not live any more, the path kept for studying, duration and cost said', () => {
    const ended = run([{ type: 'ending' }, { type: 'session_ended', reason: 'client_ended', duration_secs: 42, credits_charged_usd_cents: 3 }], view);
    expect(ended[1]!.connection).toBe('ending');
    const after = last(ended);
    expect(after.connection).toBe('ended');
    expect(after.ended).toEqual({ reason: 'client_ended', durationSecs: 42, creditsCents: 3 });
    expect(after.overlay).toEqual({ live: false, activeState: 'won', trail: ['setup', 'playing', 'won'], moves: [{ from: 'setup', to: 'playing', tool: 'begin_game' }, { from: 'playing', to: 'playing', tool: 'record_answer' }, { from: 'playing', to: 'won', tool: 'guess_correct' }], lastMove: null });
    // Clearing the trace (an edit of the flow, or Clear on the graph) keeps the rest of the panel.
    const untraced = talkReducer(after, { type: 'clear_trace' });
    expect(untraced.overlay).toEqual({ live: false, activeState: null, trail: [], moves: [], lastMove: null });
    expect(untraced.transcript).toBe(after.transcript);
    expect(untraced.ended).toBe(after.ended);
    // A live session's trace is not cleared.
    expect(talkReducer(view, { type: 'clear_trace' })).toBe(view);
    expect(isBusy(after)).toBe(false);
    // The transport closing after the end changes nothing, nor does a straggling event.
    const closed = run([{ type: 'closed', message: 'The connection to the server closed.' }, flowState('setup', PROMPTS.setup, {}, ['begin_game'])], after);
    expect(last(closed)).toBe(after);
    // A new session starts a new trail; Clear goes back to the empty state.
    expect(talkReducer(after, { type: 'connect', textOnly: true })).toMatchObject({ connection: 'connecting', textOnly: true, transcript: [], toolCalls: [], overlay: { live: false, trail: [] } });
    expect(talkReducer(after, { type: 'clear' })).toMatchObject({ connection: 'idle', state: null, overlay: { live: false, activeState: null, trail: [], lastMove: null } });
  });
});

describe('rejected tool calls', () => {
  it('are logged with the reason and move nothing', () => {
    const views = run([
      { type: 'connect', textOnly: true },
      started,
      flowState('setup', PROMPTS.setup, {}, ['begin_game']),
      {
        type: 'tool_call',
        name: 'guess_correct',
        arguments: {},
        status: 'rejected',
        reason: "tool 'guess_correct' is not available in state 'setup'; available tools: begin_game",
        from_state: 'setup',
        to_state: 'setup',
        source: 'simulator',
      },
    ]);
    const view = last(views);
    expect(view.toolCalls).toEqual([
      expect.objectContaining({ name: 'guess_correct', status: 'rejected', reason: "tool 'guess_correct' is not available in state 'setup'; available tools: begin_game", source: 'simulator' }),
    ]);
    expect(view.overlay).toBe(views[3]!.overlay);
    expect(view.state?.name).toBe('setup');
  });
});

describe('transcript lines', () => {
  const base = run([{ type: 'connect', textOnly: false }, started]);

  it('revise interim words in place until the final ones arrive', () => {
    const views = run(
      [
        { type: 'transcript', role: 'user', text: 'is it', final: false },
        { type: 'transcript', role: 'user', text: 'is it an ani', final: false },
        { type: 'transcript', role: 'user', text: 'Is it an animal?', final: true },
        { type: 'transcript', role: 'user', text: 'Is it', final: false },
      ],
      last(base),
    );
    expect(views[1]!.transcript).toEqual([expect.objectContaining({ role: 'user', text: 'is it', final: false })]);
    expect(views[2]!.transcript).toEqual([expect.objectContaining({ text: 'is it an ani', final: false })]);
    expect(views[3]!.transcript).toEqual([expect.objectContaining({ text: 'Is it an animal?', final: true })]);
    expect(views[3]!.transcript[0]!.id).toBe(views[1]!.transcript[0]!.id);
    // The next utterance starts a new line.
    expect(views[4]!.transcript.map((l) => [l.text, l.final])).toEqual([
      ['Is it an animal?', true],
      ['Is it', false],
    ]);
  });

  it('mark a barge-in on the agent line it cut, with how far it was heard', () => {
    const views = run(
      [
        { type: 'transcript', role: 'user', text: 'Is it big?', final: true },
        { type: 'transcript', role: 'agent', text: 'No, it is not big. It is rather small and soft.', final: true },
        { type: 'agent_started_speaking' },
        { type: 'user_started_speaking' },
        { type: 'interrupted' },
        { type: 'agent_stopped_speaking' },
        { type: 'transcript', role: 'agent', text: 'No, it is not big.', final: true, interrupted: true },
      ],
      last(base),
    );
    const view = last(views);
    expect(view.transcript.map((l) => [l.role, l.text, l.interrupted, l.heard])).toEqual([
      ['user', 'Is it big?', false, null],
      ['agent', 'No, it is not big. It is rather small and soft.', true, 'No, it is not big.'],
    ]);
    expect(views[5]!.activity).toBe('interrupted');
    expect(view.activity).toBe('interrupted'); // stays visible after the agent stopped
  });

  it('attribute the heard words across a turn of several agent lines: heard whole, cut, never heard', () => {
    const view = last(
      run(
        [
          { type: 'transcript', role: 'user', text: 'Is it a cat?', final: true },
          { type: 'transcript', role: 'agent', text: "Yes! That's it!", final: true },
          { type: 'transcript', role: 'agent', text: 'You got it, it was a cat!', final: true },
          { type: 'transcript', role: 'agent', text: 'Want to play again?', final: true },
          { type: 'interrupted' },
          { type: 'transcript', role: 'agent', text: "Yes! That's it! You got it,", final: true, interrupted: true },
        ],
        last(base),
      ),
    );
    expect(view.transcript.map((l) => [l.text, l.interrupted, l.heard])).toEqual([
      ['Is it a cat?', false, null],
      ["Yes! That's it!", false, null],
      ['You got it, it was a cat!', true, 'You got it,'],
      ['Want to play again?', true, ''],
    ]);
  });

  it('add the heard words as their own line when the agent was cut before its words were shown', () => {
    const view = last(
      run(
        [
          { type: 'transcript', role: 'user', text: 'Hello?', final: true },
          { type: 'transcript', role: 'agent', text: 'Hi there', final: true, interrupted: true },
        ],
        last(base),
      ),
    );
    expect(view.transcript.map((l) => [l.role, l.text, l.interrupted])).toEqual([
      ['user', 'Hello?', false],
      ['agent', 'Hi there', true],
    ]);
  });
});

describe('latency per turn', () => {
  it('keeps each turn the metrics event reports, with the medians of total and server time', () => {
    const view = last(
      run([
        { type: 'connect', textOnly: false },
        started,
        metrics(1, 640, 8, { llm_ttft_ms: 300, tts_ttfb_ms: 332 }),
        metrics(2, 900, 12, { endpointing_ms: 500, stt_ms: 80, llm_ttft_ms: 150, tts_ttfb_ms: 158 }),
        metrics(3, null, null),
        metrics(4, 700, 10),
      ]),
    );
    expect(view.turns.map((t) => [t.turn, t.voice_to_voice_ms, t.server_ms])).toEqual([
      [1, 640, 8],
      [2, 900, 12],
      [3, null, null],
      [4, 700, 10],
    ]);
    expect(view.turns[1]).toEqual({ turn: 2, endpointing_ms: 500, stt_ms: 80, llm_ttft_ms: 150, tts_ttfb_ms: 158, voice_to_voice_ms: 900, server_ms: 12 });
    expect(latencySummary(view.turns)).toEqual({ turns: 4, total: 700, server: 10 });
    expect(latencySummary([])).toEqual({ turns: 0, total: null, server: null });
  });
});

describe('errors and endings', () => {
  it('shows a missing provider as information and a failure as an error, each dismissable', () => {
    const views = run([
      { type: 'connect', textOnly: true },
      started,
      { type: 'error', code: 'llm_unavailable', message: 'No language model is configured', fatal: false },
      { type: 'error', code: 'tts_failed', message: 'speech synthesis failed', fatal: false },
    ]);
    const view = last(views);
    expect(view.notices.map((n) => [n.code, n.tone])).toEqual([
      ['llm_unavailable', 'info'],
      ['tts_failed', 'error'],
    ]);
    const dismissed = talkReducer(view, { type: 'dismiss', id: view.notices[0]!.id });
    expect(dismissed.notices.map((n) => n.code)).toEqual(['tts_failed']);
    // The same fact again (the server says a missing model at the start and at the first typed turn) is not a second notice.
    const again = last(
      run(
        [
          { type: 'error', code: 'llm_unavailable', message: 'No language model is configured, so the agent cannot answer', fatal: false },
          { type: 'error', code: 'tts_failed', message: 'speech synthesis failed', fatal: false },
          { type: 'error', code: 'tts_failed', message: 'speech synthesis timed out', fatal: false },
        ],
        view,
      ),
    );
    // In the designer's words, a provider's own detail kept after them.
    const voiceFailed = 'The agent’s voice failed; its words still show in the conversation.';
    expect(again.notices.map((n) => [n.code, n.message])).toEqual([
      ['llm_unavailable', 'No language model is set up, so the agent cannot answer. Walk the flow with the simulator below, or add a model key in Settings → Provider keys.'],
      ['tts_failed', `${voiceFailed} (speech synthesis failed)`],
      ['tts_failed', `${voiceFailed} (speech synthesis timed out)`],
    ]);
  });

  it("says the protocol's messages in the designer's words, never its message types or codes", () => {
    const views = run([
      { type: 'connect', textOnly: false },
      started,
      ...SESSION_ERROR_CODES.map((code) => sessionError(code)),
    ]);
    const messages = last(views).notices.map((n) => n.message);
    expect(messages).toHaveLength(SESSION_ERROR_CODES.length);
    for (const message of messages) expect(message).not.toMatch(/\{"type"|simulate_tool|_unavailable|_failed|[a-z]+_[a-z]+/);
    expect(messages.find((m) => m.includes('speech-to-text'))).toBe(
      'This server has no speech-to-text, so it cannot hear you. Type your turns in the box under the conversation instead.',
    );
  });

  it('shows a notice the studio knows first, once, however the server says it again later', () => {
    const views = run([
      { type: 'connect', textOnly: false },
      { type: 'notice', code: 'stt_unavailable', message: 'This server cannot hear you.', tone: 'info' },
      started,
      { type: 'error', code: 'stt_unavailable', message: 'No speech-to-text provider is configured.', fatal: false },
    ]);
    expect(last(views).notices.map((n) => [n.code, n.message, n.tone])).toEqual([['stt_unavailable', 'This server cannot hear you.', 'info']]);
  });

  it('says when credits ran out, then how the session ended', () => {
    const views = run([
      { type: 'connect', textOnly: false },
      started,
      { type: 'credits_exhausted', balance_usd_cents: 0 },
      { type: 'session_ended', reason: 'credits_exhausted', duration_secs: 61, credits_charged_usd_cents: 6 },
    ]);
    expect(views[3]!.creditsExhausted).toBe(true);
    expect(last(views).ended).toEqual({ reason: 'credits_exhausted', durationSecs: 61, creditsCents: 6 });
    expect(describeEndReason('credits_exhausted')).toBe('credits ran out');
    expect(describeEndReason('something_new')).toBe('something new');
  });

  it('fails with the message when the offer is refused, or the connection drops mid-session', () => {
    const refused = last(run([{ type: 'connect', textOnly: false }, { type: 'closed', message: 'No flow with the id "x".' }]));
    expect(refused).toMatchObject({ connection: 'failed', failure: 'No flow with the id "x".', sessionId: null });
    const dropped = last(run([{ type: 'connect', textOnly: false }, started, flowState('setup', PROMPTS.setup, {}, ['begin_game']), { type: 'closed', message: 'The connection to the server closed.' }]));
    expect(dropped).toMatchObject({ connection: 'failed', failure: 'The connection to the server closed.' });
    expect(dropped.overlay).toEqual({ live: false, activeState: 'setup', trail: ['setup'], moves: [], lastMove: null });
  });

  it('goes back to the start when a connection still being made is cancelled, and only then', () => {
    const cancelled = last(run([{ type: 'connect', textOnly: false }, { type: 'cancel' }]));
    expect(cancelled).toMatchObject({ connection: 'idle', failure: null });
    const live = last(run([{ type: 'connect', textOnly: false }, started]));
    expect(talkReducer(live, { type: 'cancel' })).toBe(live);
  });

  it('counts hanging up as a normal end even when session_ended never came back', () => {
    const view = last(run([{ type: 'connect', textOnly: false }, started, { type: 'ending' }, { type: 'closed', message: '' }]));
    expect(view).toMatchObject({ connection: 'ended', failure: null });
  });

  it('shows a network blip as reconnecting, then live again', () => {
    const views = run([{ type: 'connect', textOnly: false }, started, { type: 'reconnecting' }, { type: 'reconnected' }]);
    expect(views[3]!.connection).toBe('reconnecting');
    expect(isConnected(views[3]!)).toBe(true);
    expect(last(views).connection).toBe('live');
  });
});
