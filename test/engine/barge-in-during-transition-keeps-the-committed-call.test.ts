import { expect, it } from 'vitest';
import { BASELINE_TURN_POLICY } from '../../server/engine/turn-rules.ts';
import { startScriptedSession } from './scripted-session.ts';

// The anchors' most common bug: the user talks over the agent while a tool call is moving the
// flow, and the session ends up half-way (history without the call, or state without history).
// Here the call is committed while its cue plays; the barge-in lands after it, so it stays.
it('a barge-in during a transition keeps the committed call, in history and state, and says what was heard', async () => {
  const rig = await startScriptedSession({
    model: [
      { text: "Welcome to ten questions! Tell me when you're ready." },
      { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }] },
      // The model is slow to answer in the new state: the user talks over the cue meanwhile.
      { text: 'Go ahead and ask your first question.', firstChunkAfterMs: 5_000 },
      { text: 'Yes, it is an animal.', toolCalls: [{ name: 'record_answer', arguments: { last_answer: 'yes', questions_asked: '1' } }] },
    ],
    transcripts: ["I'm ready", 'Is it an animal?'],
    voice: { msPerWord: 200 },
    // The engine's turn-taking before its rules: what this test measures is the rest of the turn.
    turn: BASELINE_TURN_POLICY,
  });
  await rig.run(3_000);
  rig.user.startsSpeaking();
  await rig.run(600);
  rig.user.stopsSpeaking();
  // The cue "Okay, I've got something in mind. Ask away!" is eight words, 1.6 s: cut it at 0.8 s.
  await rig.run(800);
  const before = rig.events.length;
  const framesBefore = rig.frames.length;
  rig.user.startsSpeaking();

  // The turn reported its metrics when the cue began; the barge-in adds only what was heard.
  expect(rig.kinds(before)).toEqual(['user_started_speaking', 'interrupted', 'agent_stopped_speaking', 'transcript']);
  const heard = rig.ofType('transcript').at(-1)!;
  expect(heard).toMatchObject({ role: 'agent', interrupted: true });
  expect(heard.text).toMatch(/^Okay, I've got/);
  expect("Okay, I've got something in mind. Ask away!".startsWith(heard.text)).toBe(true);
  expect(heard.text.split(' ').length).toBeLessThan(8);
  // The agent stops within the frame: no audio after the barge-in.
  await rig.run(1_000);
  expect(rig.frames.length).toBe(framesBefore);

  // The move stays: state, variables, and the call with its result in what the model remembers.
  expect(rig.session.runtime!.snapshot()).toMatchObject({ state: 'playing', variables: { secret_thing: 'a cat' } });
  rig.user.stopsSpeaking();
  await rig.run(3_000);
  const next = rig.model!.requests.find((r) => r.messages.at(-1)?.content === 'Is it an animal?')!;
  expect(next.tools).toEqual(['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions']);
  expect(next.messages.slice(1).map((m) => m.role)).toEqual(['assistant', 'user', 'assistant', 'tool', 'user']);
  expect(next.messages[3]).toMatchObject({ role: 'assistant', content: null, tool_calls: [{ function: { name: 'begin_game' } }] });
  expect(next.messages[4]).toMatchObject({ role: 'tool', content: expect.stringContaining('"ok":true') });
  expect(rig.ofType('tool_call').map((c) => [c.name, c.status, c.to_state])).toEqual([
    ['begin_game', 'accepted', 'playing'],
    ['record_answer', 'accepted', 'playing'],
  ]);
});
