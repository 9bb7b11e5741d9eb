import { describe, expect, it, vi } from 'vitest';
import { GUESSING_GAME_RULES, useVoiceRig } from '../support/voice-server.ts';
import { connectVoice, type VoiceClient } from '../support/voice-client.ts';

describe('the guessing game played by voice over /v1/ws/{token}', () => {
  const rig = useVoiceRig({ rules: GUESSING_GAME_RULES, transcripts: ["I'm ready", 'Is it an animal?', 'Is it a cat?'] });
  let client: VoiceClient;

  it('greets first, moves setup → playing → won on spoken turns, and reports each step', { timeout: 120_000 }, async () => {
    const started = await rig.server.request('POST', '/v1/sessions', { apiKey: rig.account.apiKey, body: { flow_id: rig.flowId, metadata: { campaign: 'test' } } });
    expect(started.status).toBe(200);
    client = rig.track(await connectVoice(started.body.ws_url));

    const hello = await client.waitFor('session_started');
    expect(hello).toMatchObject({ mode: 'flow', flow_id: rig.flowId, sample_rate: 16000 });
    await client.waitFor('flow_state', (e) => e.state === 'setup');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /ready/.test(e.text));
    // The greeting's second sentence is synthesized while the first plays, on flite's look-ahead
    // thread (nice 10): on a loaded machine it finishes seconds late, and the greeting with it.
    await client.waitFor('agent_stopped_speaking', undefined, 20_000);

    // Each answer waits for the reply before it to be spoken out. waitFor looks at every event
    // so far, so it is told to look past the ones already seen: the greeting's own
    // agent_stopped_speaking matched at once, and the next question cut the reply short. A reply
    // synthesized by flite on a machine loaded by two test runs took more than 15 s to play out.
    const after = (mark: number) => (e: object) => client.events.indexOf(e as never) >= mark;
    await client.speak("I'm ready");
    await client.waitFor('flow_state', (e) => e.state === 'playing');
    await client.waitFor('agent_stopped_speaking', after(client.events.length), 30_000);

    await client.speak('Is it an animal?');
    await client.waitFor('tool_call', (e) => e.name === 'record_answer' && e.status === 'accepted');
    await client.waitFor('agent_stopped_speaking', after(client.events.length), 30_000);

    await client.speak('Is it a cat?');
    const won = await client.waitFor('flow_state', (e) => e.state === 'won');
    expect(won.prompt).toBe('You got it: a cat! Found in 1 questions.');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /You got it/.test(e.text));

    const types = client.events.map((e) => e.type);
    // The user's turns were heard and transcribed, in order.
    expect(client.ofType('transcript').filter((e) => e.role === 'user').map((e) => e.text)).toEqual(["I'm ready", 'Is it an animal?', 'Is it a cat?']);
    expect(types.filter((t) => t === 'user_started_speaking')).toHaveLength(3);
    expect(types.filter((t) => t === 'user_stopped_speaking')).toHaveLength(3);
    // Every move was an accepted tool call of the state the session was in.
    expect(client.ofType('tool_call').map((e) => `${e.from_state}:${e.name}:${e.status}→${e.to_state}`)).toEqual([
      'setup:begin_game:accepted→playing',
      'playing:record_answer:accepted→playing',
      'playing:guess_correct:accepted→won',
    ]);
    // The agent's voice reached the client, and every turn reported its latency.
    expect(client.audioFrames.length).toBeGreaterThan(100);
    // A turn reports its latency with its first audio frame, which can follow its words by a
    // slow synthesis: waited for, not read at once.
    await vi.waitFor(() => expect(client.ofType('metrics').length).toBeGreaterThanOrEqual(4), { timeout: 10_000 });
    const metrics = client.ofType('metrics');
    const voiceTurn = metrics.find((m) => m.stt_ms !== null)!;
    expect(voiceTurn.endpointing_ms).toBeGreaterThan(300);
    expect(voiceTurn.voice_to_voice_ms).toBeGreaterThan(voiceTurn.server_ms!);

    client.send({ type: 'end' });
    const ended = await client.waitFor('session_ended');
    expect(ended.reason).toBe('client_ended');
    expect((await client.closed).code).toBe(1000);
    const sessions = await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey });
    expect(sessions.body[0]).toMatchObject({ status: 'ended', flow_id: rig.flowId, end_reason: 'client_ended' });
    expect(sessions.body[0].started_at).toBeLessThanOrEqual(sessions.body[0].ended_at);
  });
});
