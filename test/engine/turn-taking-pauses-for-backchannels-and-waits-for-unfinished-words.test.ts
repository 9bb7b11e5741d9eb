import { expect, it } from 'vitest';
import { BACKCHANNEL_MAX_MS, BASELINE_TURN_POLICY } from '../../server/engine/turn-rules.ts';
import { startScriptedSession, type ScriptedSession } from './scripted-session.ts';

// Turn-taking on the fake clock, in an assistant session (the server's defaults: backchannels
// ignored, the wait after the caller's words adapts). Frames are counted: 20 ms each, and the
// scripted voice makes 100 ms of audio a word.
const STORY = 'The lighthouse keeper counted ships every night. She wrote each name in a big blue book. One winter a ship came by with no name at all.';
const STORY_FRAMES = STORY.split(' ').length * 5;

async function storyPlaying(transcripts: string[], turn?: typeof BASELINE_TURN_POLICY): Promise<ScriptedSession> {
  const rig = await startScriptedSession({
    mode: 'assistant',
    model: [{ text: STORY }, { text: 'Sure, Tuesday it is.' }],
    transcripts,
    transcribeAfterMs: 100,
    voice: { msPerWord: 100 },
    ...(turn ? { turn } : {}),
  });
  // A second of the story plays.
  await rig.run(1_000);
  expect(rig.kinds()).toContain('agent_started_speaking');
  return rig;
}

it('pauses the agent the moment the caller speaks over it, and resumes its sentence after "uh-huh": the whole story is heard, nothing is answered', async () => {
  const rig = await storyPlaying(['uh-huh']);
  const before = rig.events.length;
  const framesBefore = rig.frames.length;
  rig.user.startsSpeaking();
  await rig.run(400);
  // Paused: not a frame more while the caller speaks.
  expect(rig.frames.length).toBe(framesBefore);
  rig.user.stopsSpeaking(250);
  await rig.run(200);
  expect(rig.kinds(before)).toEqual(['user_started_speaking', 'barge_in', 'user_stopped_speaking']);
  expect(rig.ofType('barge_in')).toEqual([{ type: 'barge_in', decision: 'ignored_backchannel', reason: 'backchannel', transcript: 'uh-huh', duration_ms: 150 }]);
  await rig.run(12_000);
  expect(rig.kinds()).not.toContain('interrupted');
  // Every frame of the story went out, and the part of the first sentence heard before the pause again.
  expect(rig.frames.length).toBeGreaterThan(STORY_FRAMES);
  expect(rig.frames.length).toBeLessThanOrEqual(STORY_FRAMES + 'The lighthouse keeper counted ships every night.'.split(' ').length * 5);
  expect(rig.ofType('transcript').filter((t) => t.role === 'user')).toEqual([]);
  expect(rig.model!.requests).toHaveLength(1);
});

it('resumes after a cough: speech with no words in it', async () => {
  const rig = await storyPlaying(['']);
  rig.user.startsSpeaking();
  await rig.run(150);
  rig.user.stopsSpeaking(250);
  await rig.run(200);
  expect(rig.ofType('barge_in')).toMatchObject([{ decision: 'resumed', reason: 'no_words', transcript: null }]);
  await rig.run(12_000);
  expect(rig.frames.length).toBeGreaterThan(STORY_FRAMES);
  expect(rig.kinds()).not.toContain('interrupted');
});

it('cuts the reply on real words, and the model hears what was heard and what was said', async () => {
  const rig = await storyPlaying(['Wait, no, Tuesday']);
  const framesBefore = rig.frames.length;
  rig.user.startsSpeaking();
  await rig.run(300);
  rig.user.stopsSpeaking(250);
  await rig.run(150);
  expect(rig.frames.length).toBe(framesBefore);
  expect(rig.kinds().filter((k) => ['interrupted', 'barge_in', 'turn_end'].includes(k))).toEqual(['interrupted', 'barge_in']);
  expect(rig.ofType('barge_in')).toMatchObject([{ decision: 'interrupted', reason: 'words', transcript: 'Wait, no, Tuesday' }]);
  await rig.run(2_000);
  expect(rig.ofType('turn_end')).toEqual([{ type: 'turn_end', wait_ms: 800, reason: 'default', transcript: 'Wait, no, Tuesday' }]);
  const second = rig.model!.requests[1]!;
  expect(second.messages.at(-1)).toEqual({ role: 'user', content: 'Wait, no, Tuesday' });
  expect(String(second.messages.at(-2)?.content)).toMatch(/^The lighthouse keeper.*…$/);
});

it('cuts the reply once the caller has spoken long enough, before any words are known', async () => {
  const rig = await storyPlaying(['Actually I wanted to ask about something else']);
  rig.user.startsSpeaking();
  await rig.run(BACKCHANNEL_MAX_MS - 50);
  expect(rig.kinds()).not.toContain('interrupted');
  await rig.run(100);
  expect(rig.ofType('barge_in')).toMatchObject([{ decision: 'interrupted', reason: 'duration', transcript: null }]);
});

it('keeps "I\'d like to book a table on… Tuesday" one turn across a 700 ms pause', async () => {
  const rig = await startScriptedSession({ mode: 'assistant', model: [{ text: 'Hello.' }, { text: 'Tuesday, noted.' }], transcripts: ["I'd like to book a table on", 'Tuesday'], transcribeAfterMs: 100 });
  await rig.run(2_000);
  const before = rig.events.length;
  rig.user.startsSpeaking();
  await rig.run(1_200);
  // The VAD reports the pause at its shortest wait; the words say it is no end.
  rig.user.stopsSpeaking(250);
  await rig.run(450);
  expect(rig.kinds(before)).toEqual(['user_started_speaking']);
  rig.user.startsSpeaking();
  await rig.run(500);
  rig.user.stopsSpeaking(250);
  await rig.run(1_000);
  expect(rig.ofType('turn_end')).toEqual([{ type: 'turn_end', wait_ms: 800, reason: 'default', transcript: "I'd like to book a table on Tuesday" }]);
  expect(rig.ofType('transcript').filter((t) => t.role === 'user').map((t) => t.text)).toEqual(["I'd like to book a table on Tuesday"]);
  expect(rig.model!.requests).toHaveLength(2);
  expect(rig.ofType('metrics').at(-1)?.endpointing_ms).toBe(800);
});

/**
 * "I'd like to book a table", then a pause: reported at the VAD's shortest wait (250 ms ago), the
 * words look complete, so the turn ends 800 ms after the last voiced audio. Returns 650 ms in.
 */
async function pausedAfterCompleteWords(transcripts: string[], reply: string): Promise<ScriptedSession> {
  const rig = await startScriptedSession({ mode: 'assistant', model: [{ text: 'Hello.' }, { text: reply }], transcripts, transcribeAfterMs: 100 });
  await rig.run(2_000);
  rig.user.startsSpeaking();
  await rig.run(1_200);
  rig.user.stopsSpeaking(250);
  await rig.run(400);
  return rig;
}

it('hears the caller go on after a pause shorter than the wait before the detector confirms it: "I\'d like to book a table… for four" stays one turn', async () => {
  const rig = await pausedAfterCompleteWords(["I'd like to book a table", 'for four'], 'A table for four.');
  // At 650 ms the caller goes on: voiced audio, confirmed as speech only 200 ms later, past 800.
  rig.user.voiceBegins();
  await rig.run(200);
  expect(rig.ofType('turn_end')).toEqual([]);
  rig.user.startsSpeaking();
  await rig.run(500);
  rig.user.stopsSpeaking(250);
  await rig.run(1_000);
  expect(rig.ofType('turn_end')).toEqual([{ type: 'turn_end', wait_ms: 800, reason: 'default', transcript: "I'd like to book a table for four" }]);
  expect(rig.model!.requests).toHaveLength(2);
});

it('ends the turn once voiced audio in the pause fades unconfirmed (a click, a breath)', async () => {
  const rig = await pausedAfterCompleteWords(["I'd like to book a table"], 'A table, noted.');
  rig.user.voiceBegins();
  await rig.run(300);
  expect(rig.ofType('turn_end')).toEqual([]);
  rig.user.voiceFades();
  await rig.run(50);
  expect(rig.ofType('turn_end')).toEqual([{ type: 'turn_end', wait_ms: 800, reason: 'default', transcript: "I'd like to book a table" }]);
});

it('ends the turn when voiced audio in the pause is neither confirmed nor fades: the caller\'s audio stopped (a SIP caller sends no more packets)', async () => {
  const rig = await pausedAfterCompleteWords(["I'd like to book a table"], 'A table, noted.');
  rig.user.voiceBegins();
  await rig.run(500);
  expect(rig.ofType('turn_end')).toEqual([]);
  await rig.run(200);
  expect(rig.ofType('turn_end')).toEqual([{ type: 'turn_end', wait_ms: 800, reason: 'default', transcript: "I'd like to book a table" }]);
});

it('with the baseline policy, stops the agent at "uh-huh" at once, as the engine always did', async () => {
  const rig = await storyPlaying(['uh-huh'], BASELINE_TURN_POLICY);
  const before = rig.events.length;
  rig.user.startsSpeaking();
  expect(rig.kinds(before)).toEqual(['user_started_speaking', 'interrupted', 'agent_stopped_speaking', 'transcript']);
  rig.user.stopsSpeaking(500);
  await rig.run(2_000);
  expect(rig.kinds()).not.toContain('barge_in');
  expect(rig.kinds()).not.toContain('turn_end');
  expect(rig.ofType('transcript').filter((t) => t.role === 'user').map((t) => t.text)).toEqual(['uh-huh']);
});

const FLOW_WITH_TURN = (stateTurn: string) => `id: turns
version: "1.0.0"
initial_state: chat
settings:
  base_system_prompt: You help callers.
  turn: { backchannels: interrupt, min_interruption_words: 0 }
states:
  chat:
${stateTurn}
    agent:
      prompt: Tell the story.
`;

it("takes a state's turn over the flow's settings.turn over the server's, and the baseline written in the flow behaves as the engine did", async () => {
  // The flow's own baseline: backchannels interrupt, no minimum, a fixed 500 ms wait.
  const baseline = await startScriptedSession({
    flowYaml: FLOW_WITH_TURN('    turn: { endpointing_ms: 500, max_endpointing_ms: 500 }'),
    model: [{ text: STORY }, { text: 'Okay.' }],
    transcripts: ['uh-huh'],
    voice: { msPerWord: 100 },
  });
  await baseline.run(1_000);
  let before = baseline.events.length;
  baseline.user.startsSpeaking();
  expect(baseline.kinds(before)).toEqual(['user_started_speaking', 'interrupted', 'agent_stopped_speaking', 'transcript']);
  baseline.user.stopsSpeaking(500);
  await baseline.run(1_000);
  expect(baseline.kinds()).not.toContain('turn_end');
  expect(baseline.ofType('transcript').filter((t) => t.role === 'user').map((t) => t.text)).toEqual(['uh-huh']);
  await baseline.session.end('test_finished');

  // The same flow whose state ignores backchannels: the state's key wins over the flow's.
  const own = await startScriptedSession({
    flowYaml: FLOW_WITH_TURN('    turn: { backchannels: ignore, min_interruption_words: 1 }'),
    model: [{ text: STORY }, { text: 'Okay.' }],
    transcripts: ['uh-huh'],
    voice: { msPerWord: 100 },
  });
  await own.run(1_000);
  before = own.events.length;
  own.user.startsSpeaking();
  expect(own.kinds(before)).toEqual(['user_started_speaking']);
  own.user.stopsSpeaking(250);
  await own.run(300);
  expect(own.ofType('barge_in')).toMatchObject([{ decision: 'ignored_backchannel' }]);
});

it('does not take a backchannel for long speech because its transcript was slow to come', async () => {
  const rig = await startScriptedSession({
    mode: 'assistant',
    model: [{ text: STORY }],
    transcripts: ['uh-huh'],
    // A recognizer that only transcribes at the end, and slowly.
    transcribeAfterMs: 1_500,
    voice: { msPerWord: 100 },
  });
  await rig.run(1_000);
  rig.user.startsSpeaking();
  await rig.run(400);
  rig.user.stopsSpeaking(250);
  await rig.run(2_000);
  expect(rig.ofType('barge_in')).toMatchObject([{ decision: 'ignored_backchannel', transcript: 'uh-huh', duration_ms: 150 }]);
  expect(rig.kinds()).not.toContain('interrupted');
});

it('pauses the agent at the first voiced frame over it, before the VAD confirms speech, and a run that fades goes on where it stopped: a hiccup, no barge-in', async () => {
  const rig = await storyPlaying(['']);
  const before = rig.events.length;
  const framesBefore = rig.frames.length;
  rig.user.voiceBegins();
  await rig.run(40);
  expect(rig.frames.length).toBeLessThanOrEqual(framesBefore + 2);
  const paused = rig.frames.length;
  await rig.run(120);
  expect(rig.frames.length).toBe(paused);
  rig.user.voiceFades();
  await rig.run(12_000);
  expect(rig.kinds(before)).not.toContain('interrupted');
  expect(rig.kinds(before)).not.toContain('barge_in');
  expect(rig.kinds(before)).not.toContain('user_started_speaking');
  // Every frame of the story once: nothing cut, nothing said twice.
  expect(rig.frames.length).toBe(STORY_FRAMES);
});

it('a real interruption is already paused when the VAD confirms it, and is cut once its words are heard', async () => {
  const rig = await storyPlaying(['Wait, no, Tuesday']);
  const framesBefore = rig.frames.length;
  rig.user.voiceBegins();
  await rig.run(200);
  rig.user.startsSpeaking();
  await rig.run(300);
  expect(rig.frames.length).toBeLessThanOrEqual(framesBefore + 2);
  expect(rig.kinds()).not.toContain('interrupted');
  rig.user.stopsSpeaking(250);
  await rig.run(150);
  expect(rig.kinds().filter((k) => ['interrupted', 'barge_in'].includes(k))).toEqual(['interrupted', 'barge_in']);
  expect(rig.ofType('barge_in')).toMatchObject([{ decision: 'interrupted', reason: 'words', transcript: 'Wait, no, Tuesday' }]);
});

it('goes on where it stopped when voiced audio over it is neither confirmed nor fades (the caller\'s audio stopped)', async () => {
  const rig = await storyPlaying(['']);
  const framesBefore = rig.frames.length;
  rig.user.voiceBegins();
  await rig.run(500);
  expect(rig.frames.length).toBeLessThanOrEqual(framesBefore + 2);
  await rig.run(12_000);
  expect(rig.frames.length).toBe(STORY_FRAMES);
  expect(rig.kinds()).not.toContain('interrupted');
});

it('with the baseline policy, voiced audio that is not yet speech does not touch the agent', async () => {
  const rig = await storyPlaying([''], BASELINE_TURN_POLICY);
  const framesBefore = rig.frames.length;
  rig.user.voiceBegins();
  await rig.run(200);
  expect(rig.frames.length).toBeGreaterThanOrEqual(framesBefore + 8);
});
