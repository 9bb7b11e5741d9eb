// The adherence figure a backend reads for a real call: a model that keeps trying to leave its
// state (a tool another state offers, a tool without its required argument) is refused every
// time, moves only through the state's own tool, and the call's record counts each attempt.
import { describe, expect, it } from 'vitest';
import { connectSession, useVoiceRig } from '../support/voice-server.ts';

describe('the adherence figure of a call', () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 20 },
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['begin_game'] }, respond: { text: 'Welcome! Say ready to start.' } },
      // First it jumps ahead to a tool of `playing`, then forgets begin_game's required argument, then
      // gets it right (a rule is reached only when those above it passed: each is the first to get there).
      { when: { lastRole: 'user', lastUserText: /ready/i, nth: 1 }, respond: { toolCalls: [{ name: 'guess_correct', arguments: {} }] } },
      { when: { lastRole: 'user', lastUserText: /ready/i, nth: 1 }, respond: { toolCalls: [{ name: 'begin_game', arguments: { questions_asked: '0' } }] } },
      { when: { lastRole: 'user', lastUserText: /ready/i, nth: 1 }, respond: { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a kite' } }] } },
      // In `playing`, it tries a tool of the end states.
      { when: { lastRole: 'user', lastUserText: /kite/i }, respond: { toolCalls: [{ name: 'play_again', arguments: {} }] } },
      { when: { lastRole: 'tool', toolsOffered: ['begin_game'] }, respond: { text: 'Hold on, say ready again.' } },
      { when: { lastRole: 'tool', toolsOffered: ['record_answer'] }, respond: { text: 'Ask your next question.' } },
    ],
  });

  it('counts every refused attempt and the one move, in the record the backend reads', { timeout: 60_000 }, async () => {
    const client = rig.track(await connectSession(rig));
    const started = await client.waitFor('session_started');
    await client.waitFor('agent_stopped_speaking');
    // Each reply is heard out before the caller speaks again (speaking over it would be a barge-in).
    const after = (event: object) => client.events.indexOf(event as never);
    const answered = async (nth: number) => {
      const call = await client.waitFor('tool_call', (e) => client.ofType('tool_call').indexOf(e) === nth);
      await client.waitFor('agent_stopped_speaking', (e) => after(e) > after(call));
    };
    for (let i = 0; i < 3; i++) {
      client.send({ type: 'text', text: "I'm ready" });
      await answered(i);
    }
    client.send({ type: 'text', text: 'Is it a kite?' });
    await answered(3);
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;

    // The flow moved once, through the state's own tool.
    expect(client.ofType('flow_state').map((e) => e.state)).toEqual(['setup', 'playing']);
    const calls = client.ofType('tool_call').map((e) => [e.name, e.status, e.code ?? null]);
    expect(calls).toEqual([
      ['guess_correct', 'rejected', 'unlisted_tool'],
      ['begin_game', 'rejected', 'missing_argument'],
      ['begin_game', 'accepted', null],
      ['play_again', 'rejected', 'unlisted_tool'],
    ]);

    const detail = await rig.server.request('GET', `/v1/sessions/${started.session_id}`, { apiKey: rig.account.apiKey });
    expect(detail.status).toBe(200);
    expect(detail.body.adherence).toEqual({ tool_calls: 4, moves: 1, rejected_off_state: 2, rejected_arguments: 1, rejected_other: 0 });
    expect(detail.body.tool_calls.map((c: { code?: string }) => c.code ?? null)).toEqual(['unlisted_tool', 'missing_argument', null, 'unlisted_tool']);
  });
});
