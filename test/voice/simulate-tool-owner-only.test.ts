import { describe, expect, it } from 'vitest';
import { chatRequests, toolsOffered, useVoiceRig } from '../support/voice-server.ts';
import { connectVoice, wsUrl, type VoiceClient } from '../support/voice-client.ts';

const PLAYING_TOOLS = ['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions'];

// simulate_tool lets the flow's designer drive it by hand from the studio (signed in with a
// JWT). Nobody else may: an end user's session must not be able to skip the game.
describe('simulate_tool', () => {
  describe('with a model', () => {
    const rig = useVoiceRig({
      tts: 'openai',
      openai: { msPerWord: 30 },
      rules: [
        { when: { lastRole: 'none' }, respond: { text: 'Welcome! Say ready.' } },
        { when: { lastRole: 'user', toolsOffered: ['record_answer'] }, respond: { text: 'Ask away.' } },
      ],
    });

    it('moves the studio owner’s session (JWT on /ws) to playing, marked as the simulator, and the model goes on from there', { timeout: 15_000 }, async () => {
      const client = rig.track(await connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${rig.flowId}&access_token=${rig.account.jwt}`)));
      await client.waitFor('agent_stopped_speaking');
      client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'x' } });

      const call = await client.waitFor('tool_call');
      expect(call).toMatchObject({ name: 'begin_game', arguments: { secret_thing: 'x' }, status: 'accepted', from_state: 'setup', to_state: 'playing', source: 'simulator' });
      const playing = await client.waitFor('flow_state', (e) => e.state === 'playing');
      expect(playing.variables).toEqual({ secret_thing: 'x' });
      // The speech cue is spoken, as when the model calls the tool.
      await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === "Okay, I've got something in mind. Ask away!");
      // A simulated call does not run the model by itself.
      expect(chatRequests(rig)).toHaveLength(1);

      client.send({ type: 'text', text: 'Is it big?' });
      await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Ask away.');
      const next = chatRequests(rig)[1]!;
      expect(toolsOffered(next)).toEqual(PLAYING_TOOLS);
      expect(next.messages[0]!.content).toContain('The secret thing is x.');
      expect(next.messages.some((m) => m.role === 'tool' && JSON.parse(m.content as string).state === 'playing')).toBe(true);
    });

    async function expectForbidden(client: VoiceClient): Promise<void> {
      await client.waitFor('agent_stopped_speaking');
      client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'x' } });
      const error = await client.waitFor('error');
      expect(error).toMatchObject({ code: 'forbidden', fatal: false });
      client.send({ type: 'ping' });
      await client.waitFor('pong');
      // Nothing moved, nothing was called, and the session is still open.
      expect(client.ofType('tool_call')).toHaveLength(0);
      expect(client.ofType('flow_state').map((e) => e.state)).toEqual(['setup']);
      expect(client.socket.readyState).toBe(client.socket.OPEN);
    }

    it('is forbidden over /v1/ws/{token} (an end user’s session)', { timeout: 15_000 }, async () => {
      await expectForbidden(await rig.connect());
    });

    it('is forbidden over /ws with an API key (a backend, not the studio)', { timeout: 15_000 }, async () => {
      await expectForbidden(rig.track(await connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${rig.flowId}`), { 'x-service-key': rig.account.apiKey })));
    });
  });

  describe('with no model at all (llm none)', () => {
    const rig = useVoiceRig({ llm: 'none', tts: 'openai', openai: { msPerWord: 30 } });
    let client: VoiceClient;

    it('walks the whole flow by hand: begin_game → guess_correct → won → play_again → setup', { timeout: 15_000 }, async () => {
      client = rig.track(await connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${rig.flowId}&access_token=${rig.account.jwt}`)));
      await client.waitFor('flow_state', (e) => e.state === 'setup');
      // The studio is told why the agent stays quiet.
      expect(await client.waitFor('error')).toMatchObject({ code: 'llm_unavailable', fatal: false });

      client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'x' } });
      await client.waitFor('flow_state', (e) => e.state === 'playing');
      client.send({ type: 'simulate_tool', name: 'guess_correct' });
      const won = await client.waitFor('flow_state', (e) => e.state === 'won');
      expect(won.prompt).toBe('You got it: x! Found in  questions.');
      // A call the state does not list is refused for the simulator too.
      client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'y' } });
      const refused = await client.waitFor('tool_call', (e) => e.status === 'rejected');
      expect(refused).toMatchObject({ name: 'begin_game', from_state: 'won', to_state: 'won', source: 'simulator' });
      expect(refused.reason).toContain('play_again');
      client.send({ type: 'simulate_tool', name: 'play_again', arguments: {} });
      await client.waitFor('flow_state', (e) => e.state === 'setup' && client.events.indexOf(e) > client.events.indexOf(won));

      expect(client.ofType('flow_state').map((e) => e.state)).toEqual(['setup', 'playing', 'won', 'setup']);
      expect(client.ofType('tool_call').map((e) => `${e.source}:${e.from_state}:${e.name}:${e.status}→${e.to_state}`)).toEqual([
        'simulator:setup:begin_game:accepted→playing',
        'simulator:playing:guess_correct:accepted→won',
        'simulator:won:begin_game:rejected→won',
        'simulator:won:play_again:accepted→setup',
      ]);
      // The cues were spoken with no model anywhere.
      const cue = await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === "Great, let's go again!");
      await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(cue));
      expect(client.audioFrames.filter((f) => f.afterEvent >= client.events.indexOf(cue)).length).toBeGreaterThan(3);
      expect(chatRequests(rig)).toHaveLength(0);
      expect(client.ofType('error').map((e) => e.code)).toEqual(['llm_unavailable']);
    });
  });
});
