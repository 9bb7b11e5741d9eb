import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeSpeech } from '../support/speech.ts';
import { chatRequests, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

const LONG_REPLY =
  'Once upon a time there was a lighthouse keeper who counted ships every night. ' +
  'She wrote each name in a big blue book and read them back to the sea at dawn. ' +
  'One winter a ship came by that had no name at all, and she did not know what to write. ' +
  'So she gave it a name of her own, and the ship came back every year to hear it.';

// The user talks over the agent: the agent falls silent within a frame or two, and both the
// client and the model are told only what was actually heard.
describe('barge-in while the agent speaks', () => {
  const rig = useVoiceRig({
    // 100 ms a word: the story takes about seven seconds to say, in real time.
    tts: 'openai',
    openai: { msPerWord: 100 },
    transcripts: ['Wait, stop please'],
    rules: [
      { when: { lastRole: 'none' }, respond: { text: LONG_REPLY } },
      { when: { lastRole: 'user', lastUserText: /stop/i }, respond: { text: 'Sure, I stopped.' } },
    ],
  });
  let client: VoiceClient;
  // The words must come while the story plays: synthesized now, not when they are due.
  beforeAll(async () => {
    await synthesizeSpeech('Wait, stop please');
  });

  it('stops agent audio at once, says interrupted, keeps only the spoken words, and the model sees the cut reply', { timeout: 20_000 }, async () => {
    client = await rig.connect({});
    const full = await client.waitFor('transcript', (e) => e.role === 'agent');
    expect(full.text).toBe(LONG_REPLY);
    await client.waitFor('agent_started_speaking');
    // Let about a second of the story play, then talk over it.
    while (client.audioFrames.length < 50) await new Promise((r) => setTimeout(r, 20));
    await client.speak('Wait, stop please', { speed: 2 });

    const interrupted = await client.waitFor('interrupted');
    const at = client.events.indexOf(interrupted);
    const types = client.events.map((e) => e.type);
    // The order the app sees: the user started, the agent was cut, it stopped speaking.
    expect(types.slice(at - 1, at + 2)).toEqual(['user_started_speaking', 'interrupted', 'agent_stopped_speaking']);

    const cut = await client.waitFor('transcript', (e) => e.role === 'agent' && e.interrupted === true);
    // Only the words that were sent: a real prefix of the story, not the whole of it.
    expect(cut.text.length).toBeGreaterThan(0);
    expect(cut.text.length).toBeLessThan(LONG_REPLY.length);
    expect(LONG_REPLY.startsWith(cut.text)).toBe(true);

    await client.waitFor('transcript', (e) => e.role === 'user' && e.text === 'Wait, stop please');
    const answer = await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Sure, I stopped.');
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(answer));

    // Counted in frames, not time: between `interrupted` and the words of the next reply (which
    // go out before its audio), at most two frames of the story were still on their way.
    const nextReply = client.events.indexOf(answer);
    const lateFrames = client.audioFrames.filter((f) => f.afterEvent >= at && f.afterEvent < nextReply);
    expect(lateFrames.length).toBeLessThanOrEqual(2);
    expect(types.slice(at, nextReply)).not.toContain('agent_started_speaking');
    // Before the cut the story really was playing.
    expect(client.audioFrames.filter((f) => f.afterEvent < at).length).toBeGreaterThanOrEqual(50);

    // The model remembers what the user heard, marked as cut off, not the whole story.
    const requests = chatRequests(rig);
    expect(requests).toHaveLength(2);
    const history = requests[1]!.messages.slice(1);
    expect(history).toEqual([
      { role: 'assistant', content: `${cut.text}…` },
      { role: 'user', content: 'Wait, stop please' },
    ]);
    expect(JSON.stringify(requests[1]!.messages)).not.toContain('ship came back every year');

    // The session's transcript says what was said: the story once, as far as it was heard.
    const sessionId = (await client.waitFor('session_started')).session_id as string;
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    const detail = (await rig.server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: rig.account.apiKey })).body;
    expect(detail.transcript.map((l: { role: string; text: string; interrupted: boolean }) => [l.role, l.text, l.interrupted])).toEqual([
      ['agent', cut.text, true],
      ['user', 'Wait, stop please', false],
      ['agent', 'Sure, I stopped.', false],
    ]);
  });
});
