// Turn-taking (docs/flows.md#turn-taking) on the 8 kHz G.711 line of a carrier's call: the same
// stages as a browser session, so a backchannel over the agent is not taken for an interruption
// (nothing is cleared at the carrier, the whole reply reaches the caller), and real words are.
import { describe, expect, it, vi } from 'vitest';
import { padWithSilence, synthesizeSpeech } from '../../support/speech.ts';
import { usePhoneRig } from '../../support/phone-rig.ts';

const STORY =
  'Once upon a time there was a lighthouse keeper who counted ships every night. ' +
  'She wrote each name in a big blue book and read them back to the sea at dawn. ' +
  'One winter a ship came by that had no name at all, and she did not know what to write.';

const FLOW = `id: phone-turns
version: "1.0.0"
initial_state: chat
settings:
  base_system_prompt: You help callers.
  voice: { provider: openai, voice: nova }
states:
  chat:
    agent:
      prompt: Tell the story, then answer the caller.
`;

type TimelineEvent = { type: string; event: Record<string, unknown> };

describe.each(['twilio'] as const)('turn-taking on a %s call', (carrier) => {
  const rig = usePhoneRig(carrier, {
    flowYaml: FLOW,
    tts: 'openai',
    openai: { msPerWord: 100 },
    transcripts: ['Yeah, I see', 'Wait, no, Tuesday'],
    rules: [
      // Told twice: the caller's real words come while its second telling plays.
      { when: { lastRole: 'none' }, respond: { text: `${STORY} ${STORY}` } },
      { when: { lastRole: 'user' }, respond: { text: 'Tuesday it is.' } },
    ],
  });

  it('goes on over "yeah, I see" with nothing cleared at the carrier, then is cut by "wait, no, Tuesday"', { timeout: 90_000 }, async () => {
    const { server, account } = rig();
    const backchannel = padWithSilence(await synthesizeSpeech('Yeah, I see'), 200, 800);
    const words = padWithSilence(await synthesizeSpeech('Wait, no, Tuesday'), 200, 1_200);
    const stream = await rig().call('CA22222222222222222222222222222222');
    const sessionId = await rig().liveSession().then((s) => s.id);
    const events = async (): Promise<TimelineEvent[]> => (await server.request('GET', `/v1/sessions/${sessionId}/events?limit=500`, { apiKey: account.apiKey })).body.events;

    // A second of the story on the line, then the caller's backchannel over it.
    await vi.waitFor(() => expect(stream.receivedAudio().length).toBeGreaterThan(8_000), { timeout: 30_000, interval: 50 });
    await stream.sendAudio(backchannel, 16_000);
    await vi.waitFor(async () => expect((await events()).some((e) => e.type === 'barge_in')).toBe(true), { timeout: 15_000, interval: 200 });
    expect((await events()).find((e) => e.type === 'barge_in')?.event).toMatchObject({ decision: 'ignored_backchannel', transcript: 'Yeah, I see' });
    expect(stream.clears).toBe(0);

    // The agent went on: a whole telling of the story reaches the caller (100 ms a word at 8 kHz).
    const storySamples = STORY.split(/\s+/).length * 800;
    await vi.waitFor(() => expect(stream.receivedAudio().length).toBeGreaterThan(storySamples), { timeout: 30_000, interval: 100 });
    expect((await events()).filter((e) => e.type === 'interrupted')).toEqual([]);

    // Real words over its second telling are an interruption: the carrier is told to clear.
    await stream.sendAudio(words, 16_000);
    await vi.waitFor(() => expect(stream.clears).toBeGreaterThan(0), { timeout: 15_000, interval: 100 });
    expect((await events()).filter((e) => e.type === 'barge_in').map((e) => e.event.decision)).toEqual(['ignored_backchannel', 'interrupted']);
    await vi.waitFor(async () => expect((await events()).filter((e) => e.type === 'transcript' && e.event.role === 'user').map((e) => e.event.text)).toEqual(['Wait, no, Tuesday']), {
      timeout: 20_000,
      interval: 200,
    });
    const turnEnds = (await events()).filter((e) => e.type === 'turn_end').map((e) => e.event);
    expect(turnEnds).toMatchObject([{ reason: 'default', transcript: 'Wait, no, Tuesday' }]);
    expect(stream.protocolErrors).toEqual([]);
    await stream.hangUp();
  });
});
