import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeSpeech } from '../support/speech.ts';
import { toolsOffered, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

const PLAYING_TOOLS = ['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions'];

// The anchors' most common bug: the user interrupts while the agent is moving the flow, and the
// flow ends up half-way (or back where it was). A committed tool call is never undone.
describe('an interruption right after a transition', () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 60 },
    transcripts: ['Hang on a second'],
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['begin_game'] }, respond: { text: 'Welcome! Say ready.' } },
      // Words and a moving tool call in one slow response.
      {
        when: { lastRole: 'user', lastUserText: /ready/i, toolsOffered: ['begin_game'] },
        respond: { text: 'Great, let me think of something good.', toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }], chunkDelayMs: 30 },
      },
      { when: { lastRole: 'tool', toolsOffered: ['record_answer'], systemIncludes: 'Questions asked so far: 1.' }, respond: { text: 'Next question?' } },
      // The model's first words in the new state are slow to come: the interruption lands while it thinks.
      { when: { lastRole: 'tool', toolsOffered: ['record_answer'] }, respond: { text: 'Go ahead and ask your first question.', firstChunkDelayMs: 1_500 } },
      { when: { lastRole: 'user', lastUserText: /animal/i, toolsOffered: ['record_answer'] }, respond: { text: 'Yes.', toolCalls: [{ name: 'record_answer', arguments: { last_answer: 'yes', questions_asked: '1' } }] } },
      { when: { lastRole: 'user', lastUserText: /hang on/i, toolsOffered: ['record_answer'] }, respond: { text: 'Sure, take your time.' } },
    ],
  });
  // The words must land inside the model's pause: synthesized now, not when they are due.
  beforeAll(async () => {
    await synthesizeSpeech('Hang on a second');
  });

  it.each([
    {
      how: 'a typed {"type":"interrupt"}',
      interrupt: (client: VoiceClient) => client.send({ type: 'interrupt' }),
      nextTurn: async (client: VoiceClient) => {
        client.send({ type: 'text', text: 'Is it an animal?' });
        await client.waitFor('tool_call', (e) => e.name === 'record_answer');
      },
    },
    {
      how: 'the user speaking over the agent',
      interrupt: (client: VoiceClient) => client.speak('Hang on a second', { speed: 3 }),
      nextTurn: async (client: VoiceClient) => {
        await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Sure, take your time.');
      },
    },
  ])('by $how keeps the session in playing, and the model goes on with playing’s tools', { timeout: 20_000 }, async ({ interrupt, nextTurn }) => {
    const client = await rig.connect();
    await client.waitFor('agent_stopped_speaking');
    const requestsBefore = rig.openai.requests.length;
    client.send({ type: 'text', text: "I'm ready" });

    const moved = await client.waitFor('tool_call');
    expect(moved).toMatchObject({ name: 'begin_game', status: 'accepted', from_state: 'setup', to_state: 'playing' });
    const interrupting = interrupt(client);
    await client.waitFor('interrupted');
    await interrupting;
    await nextTurn(client);

    // The move stands: playing was shown, and nothing after it went back to setup.
    const states = client.ofType('flow_state').map((e) => e.state);
    expect(states[0]).toBe('setup');
    expect(states.slice(1).length).toBeGreaterThan(0);
    expect(states.slice(1).every((s) => s === 'playing')).toBe(true);
    expect(client.ofType('tool_call').every((e) => e.from_state === 'playing' || e.name === 'begin_game')).toBe(true);
    expect(client.ofType('tool_call').filter((e) => e.name === 'begin_game')).toHaveLength(1);

    const chats = rig.openai.requests.slice(requestsBefore).filter((r) => r.path === '/v1/chat/completions');
    // 1: the moving response (setup's tool); 2: the first words in playing, cut off; then the next turn.
    expect(toolsOffered(chats[0]!.body as never)).toEqual(['begin_game']);
    expect(chats[1]!.state).toBe('aborted');
    expect(chats.length).toBeGreaterThanOrEqual(3);
    for (const chat of chats.slice(1)) expect(toolsOffered(chat.body as never)).toEqual(PLAYING_TOOLS);
    // The committed call and its result are in the history the model sees next.
    const next = chats[2]!.body as { messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ function: { name: string } }> }> };
    expect(next.messages.some((m) => m.role === 'assistant' && m.tool_calls?.[0]?.function.name === 'begin_game')).toBe(true);
    expect(next.messages.some((m) => m.role === 'tool' && JSON.parse(m.content as string).state === 'playing')).toBe(true);
    expect(next.messages[0]!.content).toContain('The secret thing is a cat.');
  });
});
