import { expect, it } from 'vitest';
import { startScriptedSession } from './scripted-session.ts';

// A model that jumps ahead (guess_correct while the game has not begun) is refused: nothing
// moves, nothing is stored, the client sees the rejection and the model is told which tools it has.
it('a tool the state does not list is rejected: no move, no variables, and the model hears why and speaks', async () => {
  const rig = await startScriptedSession({
    model: [
      { text: "Welcome to ten questions! Tell me when you're ready." },
      { toolCalls: [{ name: 'guess_correct' }] },
      { text: "We haven't started yet. Tell me when you're ready." },
    ],
  });
  await rig.run(3_000);
  const before = rig.events.length;

  rig.send({ type: 'text', text: 'Is it a cat?' });
  await rig.run(5_000);

  // The answer's first sentence is spoken while the rest streams; its transcript follows the stream.
  expect(rig.kinds(before)).toEqual(['transcript', 'tool_call', 'agent_started_speaking', 'metrics', 'transcript', 'agent_stopped_speaking']);
  const [call] = rig.ofType('tool_call');
  expect(call).toMatchObject({ name: 'guess_correct', status: 'rejected', from_state: 'setup', to_state: 'setup', source: 'model' });
  expect(call!.reason).toContain('begin_game');
  expect(rig.session.runtime!.snapshot()).toMatchObject({ state: 'setup', variables: {} });
  expect(rig.hooks.filter((h) => h.type === 'state_changed')).toEqual([]);
  // The model is asked again, still in setup, with the refusal as the call's result.
  const retry = rig.model!.requests[2]!;
  expect(retry.tools).toEqual(['begin_game']);
  const result = retry.messages.at(-1)!;
  expect(result.role).toBe('tool');
  expect(JSON.parse(result.content as string)).toMatchObject({ ok: false, error: expect.stringContaining('begin_game') });
  expect(rig.ofType('transcript').at(-1)).toMatchObject({ role: 'agent', text: "We haven't started yet. Tell me when you're ready." });
});
