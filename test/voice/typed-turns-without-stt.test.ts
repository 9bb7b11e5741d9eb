import { describe, expect, it } from 'vitest';
import { useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

// A server with no speech-to-text configured still runs typed conversations; speaking to it
// gets a clear error instead of silence or a dropped connection.
describe('a server with no STT provider', () => {
  const rig = useVoiceRig({
    stt: 'none',
    tts: 'openai',
    openai: { msPerWord: 30 },
    rules: [
      { when: { lastRole: 'none' }, respond: { text: 'Hi, type to me.' } },
      { when: { lastRole: 'user', lastUserText: /weather/i }, respond: { text: 'It is sunny today.' } },
      { when: { lastRole: 'user', lastUserText: /still/i }, respond: { text: 'Yes, still here.' } },
    ],
  });
  let client: VoiceClient;

  it('answers typed turns, and answers speech with an stt_unavailable error while the socket stays open', { timeout: 15_000 }, async () => {
    client = await rig.connect({});
    await client.waitFor('agent_stopped_speaking');

    client.send({ type: 'text', text: "What's the weather?" });
    const answer = await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'It is sunny today.');
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(answer));
    expect(client.audioFrames.filter((f) => f.afterEvent >= client.events.indexOf(answer)).length).toBeGreaterThan(3);

    await client.speak('Can you hear me?', { speed: 3 });
    await client.waitFor('user_started_speaking');
    const error = await client.waitFor('error');
    expect(error).toMatchObject({ code: 'stt_unavailable', fatal: false });
    expect(error.message).toMatch(/type/i);
    // Nothing was heard, so nothing was answered.
    expect(client.ofType('transcript').filter((e) => e.role === 'user').map((e) => e.text)).toEqual(["What's the weather?"]);

    // Still connected and still answering.
    client.send({ type: 'ping' });
    await client.waitFor('pong');
    client.send({ type: 'text', text: 'Are you still there?' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Yes, still here.');
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    expect(client.ofType('error').every((e) => e.code === 'stt_unavailable')).toBe(true);
  });
});
