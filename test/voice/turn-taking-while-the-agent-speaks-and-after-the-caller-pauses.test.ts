import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { concatPcm, silence } from '../fakes/synthetic-audio.ts';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';
import { createFlow } from '../support/server.ts';
import { chatRequests, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

// Turn-taking with the server's defaults (docs/flows.md#turn-taking), heard over WebSocket: real
// speech through Silero, the Deepgram fake transcribing, frames counted as the client got them.
const STORY =
  'Once upon a time there was a lighthouse keeper who counted ships every night. ' +
  'She wrote each name in a big blue book and read them back to the sea at dawn. ' +
  'One winter a ship came by that had no name at all, and she did not know what to write.';
/** 100 ms a word, 20 ms a frame: the frames the whole story takes. */
const STORY_FRAMES = STORY.split(/\s+/).length * 5;

/** A flow whose agent opens with the story (CHAT) or with one short line (BRIEF). */
const flowYaml = (opening: 'CHAT. Tell the story' | 'BRIEF. Greet the caller') => `id: turn-demo-${opening.startsWith('BRIEF') ? 'brief' : 'story'}
version: "1.0.0"
initial_state: chat
settings:
  base_system_prompt: You help callers.
  voice: { provider: openai, voice: nova }
states:
  chat:
    agent:
      prompt: ${opening}, then ask whether to book.
      tools: [confirm_booking]
    tools:
      confirm_booking:
        description: The caller says whether to book.
        parameters:
          book: { type: boolean, required: true }
`;

describe('turn-taking while the agent speaks and after the caller pauses', () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 100 },
    rules: [
      { when: { lastRole: 'none', systemIncludes: 'BRIEF.' }, respond: { text: 'Hello. Shall I book?' } },
      { when: { lastRole: 'none' }, respond: { text: STORY } },
      { when: { lastRole: 'user', lastUserText: /Tuesday/ }, respond: { text: 'Tuesday it is.' } },
      { when: { lastRole: 'user' }, respond: { text: 'Okay.' } },
    ],
  });
  let flowId: string;
  /** The same state and tool, opened with a short line: the caller speaks once the agent is done, not over a story. */
  let briefFlowId: string;
  const phrases = ['Yeah, I see', 'Wait, no, Tuesday', 'Ahem', "I'd like to book a table on", 'Tuesday', 'Yes'];
  beforeAll(async () => {
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Turn demo', flowYaml('CHAT. Tell the story'));
    briefFlowId = await createFlow(rig.server, rig.account.apiKey, 'Turn demo, brief', flowYaml('BRIEF. Greet the caller'));
    // Synthesized now, not when they are due while the story plays.
    for (const phrase of phrases) await synthesizeSpeech(phrase);
  });
  // Each test says what the recognizer will hear, utterance by utterance.
  const willHear = (...transcripts: string[]) => rig.deepgram.transcripts.splice(0, Infinity, ...transcripts);
  beforeEach(() => void willHear());

  async function storyPlaying(): Promise<VoiceClient> {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === STORY, 15_000);
    await client.waitFor('agent_started_speaking', undefined, 15_000);
    // About a second of the story plays before the caller says anything.
    while (client.audioFrames.length < 50) await new Promise((r) => setTimeout(r, 20));
    return client;
  }

  it('does not cut the story at "yeah, I see": it pauses, resumes its sentence, and every word is heard', { timeout: 40_000 }, async () => {
    willHear('Yeah, I see');
    const client = await storyPlaying();
    // (Flite's "uh-huh" is too short and hummed for the VAD to take it for speech at all.)
    await client.speak('Yeah, I see', { silenceAfterMs: 600 });
    const decided = await client.waitFor('barge_in', undefined, 15_000);
    expect(decided).toMatchObject({ decision: 'ignored_backchannel', reason: 'backchannel', transcript: 'Yeah, I see' });
    await client.waitFor('agent_stopped_speaking', undefined, 20_000);
    expect(client.ofType('interrupted')).toEqual([]);
    expect(client.ofType('transcript').filter((e) => e.interrupted || e.role === 'user')).toEqual([]);
    // The whole story went out, every word of it. (The sentence the caller spoke over is played
    // again from its start; but on a busy machine the pause can land between two sentences, with
    // nothing to play again: test/engine/turn-taking-pauses-for-backchannels-… checks the replay
    // frame for frame on a clock of its own.)
    expect(client.audioFrames.length).toBeGreaterThanOrEqual(STORY_FRAMES);
    // Nothing was answered: the model was asked only for the story.
    expect(chatRequests(rig)).toHaveLength(1);
    client.close();
  });

  it('cuts the story within a few frames at "wait, no, Tuesday", and answers it', { timeout: 40_000 }, async () => {
    willHear('Wait, no, Tuesday');
    const client = await storyPlaying();
    await client.speak('Wait, no, Tuesday');
    const interrupted = await client.waitFor('interrupted', undefined, 15_000);
    const started = client.events.map((e) => e.type).lastIndexOf('user_started_speaking', client.events.indexOf(interrupted));
    const answer = await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Tuesday it is.', 15_000);
    // From the moment the caller's speech was heard to the next reply: at most the two frames of
    // the output lead were still on their way.
    const late = client.audioFrames.filter((f) => f.afterEvent >= started && f.afterEvent < client.events.indexOf(answer));
    expect(late.length).toBeLessThanOrEqual(2);
    expect(client.ofType('barge_in')).toMatchObject([{ decision: 'interrupted', reason: 'words' }]);
    expect(client.ofType('transcript').filter((e) => e.role === 'user').map((e) => e.text)).toEqual(['Wait, no, Tuesday']);
    client.close();
  });

  it('takes no notice of a noise burst, and resumes after a sound with no words in it', { timeout: 40_000 }, async () => {
    willHear('');
    const client = await storyPlaying();
    // A car horn's worth of noise: the VAD does not take it for speech, so nothing stops.
    await client.sendAudio(concatPcm([noiseBurst(500), silence(600, 16_000)]));
    expect(client.ofType('user_started_speaking')).toEqual([]);
    // A throat cleared into the phone: speech to the VAD, no words to the recognizer.
    await client.speak('Ahem', { silenceAfterMs: 600 });
    const decided = await client.waitFor('barge_in', undefined, 15_000);
    expect(decided).toMatchObject({ decision: 'resumed', reason: 'no_words', transcript: null });
    await client.waitFor('agent_stopped_speaking', undefined, 20_000);
    expect(client.ofType('interrupted')).toEqual([]);
    expect(client.audioFrames.length).toBeGreaterThan(STORY_FRAMES);
    client.close();
  });

  it('hears "I\'d like to book a table on… Tuesday" with a 700 ms pause as one turn, and "yes" ends its turn sooner', { timeout: 40_000 }, async () => {
    willHear("I'd like to book a table on", 'Tuesday', 'Yes');
    const client = await rig.connect({ flow_id: briefFlowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Hello. Shall I book?', 15_000);
    await client.waitFor('agent_stopped_speaking', undefined, 30_000);
    const first = await synthesizeSpeech("I'd like to book a table on");
    const second = await synthesizeSpeech('Tuesday');
    await client.sendAudio(concatPcm([padWithSilence(first, 200, 700), padWithSilence(second, 0, 1_200)]));
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Tuesday it is.', 15_000);
    expect(client.ofType('transcript').filter((e) => e.role === 'user').map((e) => e.text)).toEqual(["I'd like to book a table on Tuesday"]);
    expect(client.ofType('turn_end')).toMatchObject([{ reason: 'default', wait_ms: 800, transcript: "I'd like to book a table on Tuesday" }]);
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.findIndex((x) => x.type === 'turn_end'), 15_000);

    // The state's tool takes a yes or no: "yes" is a whole answer, and its turn ends sooner.
    await client.speak('Yes', { silenceAfterMs: 900 });
    const ended = await client.waitFor('turn_end', (e) => e.transcript === 'Yes', 15_000);
    expect(ended.reason).toBe('short_answer');
    expect(ended.wait_ms).toBeLessThan(800);
    client.close();
  });
});

/** White noise with a fast attack and a slow decay, from a fixed seed. */
function noiseBurst(ms: number): Int16Array {
  const samples = Math.round(ms * 16);
  let seed = 7;
  return Int16Array.from({ length: samples }, (_, i) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const envelope = Math.min(1, i / 80) * Math.exp(-i / (samples / 3));
    return Math.round(16_000 * envelope * ((seed / 2 ** 32) * 2 - 1));
  });
}
