import { describe, expect, it } from 'vitest';
import { chatRequests, useVoiceRig } from '../support/voice-server.ts';
import { connectVoice, wsUrl, type VoiceClient } from '../support/voice-client.ts';

const ASSISTANT_PROMPT = 'You are Pip, the front desk of a bicycle shop. Answer in one short sentence.';

// Without a flow the session is a plain assistant: the configured system prompt, no tools, no
// flow cards — it greets and answers like any voice assistant.
describe('assistant mode (no flow)', () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 30 },
    config: { engine: { assistantPrompt: ASSISTANT_PROMPT } },
    rules: [
      { when: { lastRole: 'none' }, respond: { text: 'Hi, this is Pip at the bike shop. How can I help?' } },
      { when: { lastRole: 'user', lastUserText: /open/i }, respond: { text: 'We are open from nine to six.' } },
    ],
  });

  async function greetsAndAnswers(client: VoiceClient): Promise<void> {
    rig.track(client);
    const hello = await client.waitFor('session_started');
    expect(hello).toMatchObject({ mode: 'assistant', flow_id: null, sample_rate: 16000 });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Hi, this is Pip at the bike shop. How can I help?');
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: 'When are you open?' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'We are open from nine to six.');
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.findIndex((t) => t.type === 'transcript' && /nine to six/.test(t.text)));
    expect(client.audioFrames.length).toBeGreaterThan(10);

    // No flow: no cards, no tools, nothing moved.
    expect(client.ofType('flow_state')).toHaveLength(0);
    expect(client.ofType('artifact')).toHaveLength(0);
    expect(client.ofType('tool_call')).toHaveLength(0);
    expect(client.ofType('error')).toHaveLength(0);

    // The model saw the configured assistant prompt as its system message, was offered no
    // tools, and kept the conversation.
    const id = hello.session_id;
    const requests = chatRequests(rig).slice(-2);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.messages[0]).toEqual({ role: 'system', content: ASSISTANT_PROMPT });
      expect(request.tools).toBeUndefined();
    }
    expect(requests[1]!.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Hi, this is Pip at the bike shop. How can I help?' },
      { role: 'user', content: 'When are you open?' },
    ]);

    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    const sessions = await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey });
    expect(sessions.body.find((s: { id: string }) => s.id === id)).toMatchObject({ mode: 'assistant', flow_id: null, status: 'ended' });
  }

  it('over /ws?mode=assistant with an API key', { timeout: 15_000 }, async () => {
    await greetsAndAnswers(await connectVoice(wsUrl(rig.server.url, '/ws?mode=assistant'), { 'x-service-key': rig.account.apiKey }));
  });

  it('over /ws with no mode at all (assistant is the default)', { timeout: 15_000 }, async () => {
    await greetsAndAnswers(await connectVoice(wsUrl(rig.server.url, `/ws?access_token=${rig.account.jwt}`)));
  });

  it('over /v1/ws/{token} from POST /v1/sessions without a flow_id', { timeout: 15_000 }, async () => {
    await greetsAndAnswers(await rig.connect({}));
  });
});
