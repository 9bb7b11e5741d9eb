import { describe, expect, it } from 'vitest';
import { chatRequests, toolsOffered, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

// The model cannot invent transitions: a tool the current state does not list is refused, the
// state does not move, and the model is told which tools it has so it can correct itself.
describe('a tool the current state does not list', () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 30 },
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['begin_game'] }, respond: { text: 'Welcome! Say ready to start.' } },
      // The model jumps ahead: guess_correct belongs to playing, not setup.
      { when: { lastRole: 'user', lastUserText: /cat/i }, respond: { toolCalls: [{ name: 'guess_correct', arguments: {} }] } },
      { when: { lastRole: 'tool', toolsOffered: ['begin_game'] }, respond: { text: "We haven't started yet. Say ready when you are." } },
    ],
  });
  let client: VoiceClient;

  it('is rejected with a reason naming the available tool, nothing moves, and the model hears why and speaks', { timeout: 15_000 }, async () => {
    client = await rig.connect();
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: 'Is it a cat?' });

    const call = await client.waitFor('tool_call');
    expect(call).toMatchObject({ name: 'guess_correct', status: 'rejected', from_state: 'setup', to_state: 'setup', source: 'model' });
    expect(call.reason).toContain('begin_game');

    const answer = await client.waitFor('transcript', (e) => e.role === 'agent' && /haven't started/.test(e.text));
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(answer));
    // The answer was spoken: audio frames arrived after the rejection.
    const rejectedAt = client.events.indexOf(call);
    expect(client.audioFrames.filter((f) => f.afterEvent >= rejectedAt).length).toBeGreaterThan(5);

    // The state stayed setup: the only card is the one shown at the start.
    expect(client.ofType('flow_state').map((e) => e.state)).toEqual(['setup']);
    expect(client.ofType('flow_state')[0]!.variables).toEqual({});

    // The model's next request carries the call and its refusal, and still only setup's tool.
    const requests = chatRequests(rig);
    expect(requests).toHaveLength(3);
    const retry = requests[2]!;
    expect(toolsOffered(retry)).toEqual(['begin_game']);
    const [assistant, tool] = retry.messages.slice(-2);
    expect(assistant).toMatchObject({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'guess_correct' } }] });
    expect(tool!.role).toBe('tool');
    expect(tool!.tool_call_id).toBe((assistant!.tool_calls![0] as { id: string }).id);
    const result = JSON.parse(tool!.content as string);
    expect(result).toMatchObject({ ok: false });
    expect(result.error).toContain('begin_game');
  });
});
