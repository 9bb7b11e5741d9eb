import { expect, it } from 'vitest';
import { startScriptedSession } from './scripted-session.ts';

// The flow's one way forward: the model calls a tool the state lists, and the client sees the
// call, hears the tool's cue, and gets the new state and its card before the model goes on.
it('a tool call the state lists moves the flow: tool_call, the cue, flow_state and artifact, then the model speaks with the new state’s tools', async () => {
  const rig = await startScriptedSession({
    model: [
      { text: "Welcome to ten questions! Tell me when you're ready." },
      { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }] },
      { text: 'Go ahead and ask your first question.' },
    ],
  });
  await rig.run(3_000);
  const before = rig.events.length;

  rig.send({ type: 'text', text: "I'm ready" });
  await rig.run(5_000);

  expect(rig.kinds(before)).toEqual([
    'transcript', // the user's line
    'tool_call',
    'transcript', // the cue, as spoken
    'flow_state',
    'artifact',
    // The cue starts playing while the model answers in the new state.
    'agent_started_speaking',
    'metrics',
    'transcript', // the model's answer
    'agent_stopped_speaking',
  ]);
  const [call] = rig.ofType('tool_call');
  expect(call).toEqual({
    type: 'tool_call',
    name: 'begin_game',
    arguments: { secret_thing: 'a cat', questions_asked: '0' },
    status: 'accepted',
    reason: null,
    from_state: 'setup',
    to_state: 'playing',
    source: 'model',
  });
  expect(rig.ofType('flow_state').at(-1)).toMatchObject({ state: 'playing', variables: { secret_thing: 'a cat', questions_asked: '0' } });
  expect(rig.ofType('artifact').at(-1)).toEqual({
    type: 'artifact',
    state: 'playing',
    artifact_type: 'card',
    prompt: 'Ask yes-or-no questions, or name your guess. Questions asked: 0 of 10.',
  });
  // The cue is spoken first, then the model's answer: one reply, one burst of speech.
  expect(rig.voice.sentences.slice(-2)).toEqual(["Okay, I've got something in mind. Ask away!", 'Go ahead and ask your first question.']);
  // The model ran again in `playing`, offered exactly playing's tools, knowing the call's result.
  const next = rig.model!.requests[2]!;
  expect(next.tools).toEqual(['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions']);
  expect(next.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('"ok":true') });
  expect(rig.hooks.filter((h) => h.type === 'state_changed')).toEqual([{ type: 'state_changed', from: 'setup', to: 'playing', tool: 'begin_game' }]);
});
