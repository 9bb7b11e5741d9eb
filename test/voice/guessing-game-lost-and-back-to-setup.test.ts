import { describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

// The agent speaks with the OpenAI speech fake at 40 ms a word: real, paced audio frames, but
// short enough that four spoken turns fit in a few seconds.
describe('the guessing game lost by voice, then played again', () => {
  const rig = useVoiceRig({
    rules: GUESSING_GAME_RULES,
    transcripts: ["I'm ready", 'I give up', 'Yes, again', "I'm ready"],
    tts: 'openai',
    openai: { msPerWord: 40 },
  });
  let client: VoiceClient;

  /** Speaks once the agent has finished its last line, as a polite caller does, and waits until the turn is heard. */
  async function sayWhenAgentIsQuiet(text: string): Promise<void> {
    const lastAgentLine = client.events.map((e) => e.type === 'transcript' && e.role === 'agent').lastIndexOf(true);
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > lastAgentLine);
    const heard = client.ofType('transcript').filter((e) => e.role === 'user').length;
    await client.speak(text, { speed: 4 });
    await client.waitFor('transcript', (e) => e.role === 'user' && client.ofType('transcript').filter((t) => t.role === 'user').length > heard);
  }

  it('moves setup → playing → lost (the card reveals the thing) → setup → playing on spoken turns', { timeout: 30_000 }, async () => {
    client = await rig.connect();
    await client.waitFor('transcript', (e) => e.role === 'agent' && /ready/.test(e.text));

    await sayWhenAgentIsQuiet("I'm ready");
    await client.waitFor('flow_state', (e) => e.state === 'playing');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /first question/.test(e.text));

    await sayWhenAgentIsQuiet('I give up');
    const lost = await client.waitFor('flow_state', (e) => e.state === 'lost');
    expect(lost).toMatchObject({ prompt: 'Out of questions! It was a cat.', artifact_type: 'card', tools: ['play_again'] });
    expect(lost.variables).toMatchObject({ secret_thing: 'a cat' });
    await client.waitFor('artifact', (e) => e.state === 'lost' && e.prompt === 'Out of questions! It was a cat.');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /secret thing was a cat/.test(e.text));

    await sayWhenAgentIsQuiet('Yes, again');
    const setupAgain = await client.waitFor('flow_state', (e) => e.state === 'setup' && client.events.indexOf(e) > client.events.indexOf(lost));
    expect(setupAgain.tools).toEqual(['begin_game']);
    // The play_again cue and the model's invitation are both heard.
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === "Great, let's go again!");
    await client.waitFor('transcript', (e) => e.role === 'agent' && /play again/.test(e.text));

    await sayWhenAgentIsQuiet("I'm ready");
    await client.waitFor('flow_state', (e) => e.state === 'playing' && client.ofType('flow_state').filter((f) => f.state === 'playing').length === 2);

    expect(client.ofType('transcript').filter((e) => e.role === 'user').map((e) => e.text)).toEqual(["I'm ready", 'I give up', 'Yes, again', "I'm ready"]);
    expect(client.ofType('flow_state').map((e) => e.state)).toEqual(['setup', 'playing', 'lost', 'setup', 'playing']);
    expect(client.ofType('tool_call').map((e) => `${e.from_state}:${e.name}:${e.status}→${e.to_state}`)).toEqual([
      'setup:begin_game:accepted→playing',
      'playing:out_of_questions:accepted→lost',
      'lost:play_again:accepted→setup',
      'setup:begin_game:accepted→playing',
    ]);
    expect(client.ofType('tool_call').every((e) => e.source === 'model')).toBe(true);
    // Nobody talked over the agent, so nothing was cut off.
    expect(client.ofType('interrupted')).toHaveLength(0);
    expect(client.audioFrames.length).toBeGreaterThan(50);

    // The model was only ever offered the tools of the state the session was in.
    const offered = rig.openai.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => ((r.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name).join(','));
    expect(new Set(offered)).toEqual(new Set(['begin_game', 'record_answer,guess_correct,guess_wrong,out_of_questions', 'play_again']));

    client.send({ type: 'end' });
    expect((await client.waitFor('session_ended')).reason).toBe('client_ended');
  });
});
