import { describe, expect, it } from 'vitest';
import { chatRequests, toolsOffered, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

// A listed tool called without a required argument is refused like an unlisted one: no move,
// nothing stored, and the model is told what was missing.
describe('a tool call missing a required argument', () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 30 },
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['begin_game'] }, respond: { text: 'Welcome! Say ready to start.' } },
      // begin_game needs secret_thing; the model forgets it (and sends only the optional one).
      { when: { lastRole: 'user', lastUserText: /ready/i, nth: 1 }, respond: { toolCalls: [{ name: 'begin_game', arguments: { questions_asked: '0' } }] } },
      // The second time it gets it right, without the optional one.
      { when: { lastRole: 'user', lastUserText: /ready/i }, respond: { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a kite' } }] } },
      { when: { lastRole: 'tool', toolsOffered: ['begin_game'] }, respond: { text: 'Hold on, let me think of something first.' } },
      { when: { lastRole: 'tool', toolsOffered: ['record_answer'] }, respond: { text: 'Ask your first question.' } },
    ],
  });
  let client: VoiceClient;

  it('is rejected, the session stays in setup with nothing stored, and the model is told which argument is missing', { timeout: 15_000 }, async () => {
    client = await rig.connect();
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: "I'm ready" });

    const call = await client.waitFor('tool_call');
    expect(call).toMatchObject({ name: 'begin_game', status: 'rejected', from_state: 'setup', to_state: 'setup', source: 'model' });
    expect(call.reason).toContain('secret_thing');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /Hold on/.test(e.text));
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(call));

    // No move, no speech cue, no variables: the card is still the one from the start.
    expect(client.ofType('flow_state')).toHaveLength(1);
    expect(client.ofType('flow_state')[0]).toMatchObject({ state: 'setup', variables: {} });
    expect(client.ofType('transcript').some((e) => /got something in mind/.test(e.text))).toBe(false);

    const retry = chatRequests(rig)[2]!;
    expect(toolsOffered(retry)).toEqual(['begin_game']);
    const result = JSON.parse(retry.messages.at(-1)!.content as string);
    expect(result.ok).toBe(false);
    expect(result.error).toContain('secret_thing');

    // Nothing of the refused call was stored: when the game does start, the only variable is the
    // one the accepted call set, not the questions_asked the refused one carried.
    client.send({ type: 'text', text: 'Ready now' });
    const playing = await client.waitFor('flow_state', (e) => e.state === 'playing');
    expect(playing.variables).toEqual({ secret_thing: 'a kite' });
    expect(playing.prompt).toBe('Ask yes-or-no questions, or name your guess. Questions asked:  of 10.');
    expect(client.ofType('tool_call').map((e) => `${e.name}:${e.status}`)).toEqual(['begin_game:rejected', 'begin_game:accepted']);
  });
});
