import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeSpeech } from '../support/speech.ts';
import { createFlow } from '../support/server.ts';
import { chatRequests, useVoiceRig } from '../support/voice-server.ts';

// A flow's own model, language and recording settings, and what the model is told of a tool's
// parameter (docs/flows.md#extended-flow-keys), heard over WebSocket with the provider fakes: the
// model API gets the flow's model and temperature and the parameter's description and allowed
// values, speech recognition gets the flow's language, and the call is recorded although the
// session did not ask for it.
const FLOW = `id: pizza-settings
version: "1.0.0"
initial_state: ask
settings:
  base_system_prompt: You take pizza orders.
  llm: { model: flow-model-7, temperature: 0.4 }
  language: de
  recording: true
states:
  ask:
    agent:
      prompt: Ask which size, then call pick_size.
      tools: [pick_size]
    tools:
      pick_size:
        description: The caller chose a size.
        parameters:
          size:
            type: string
            required: true
            description: The pizza size the caller said.
            enum: [small, large]
    transitions:
      on_tool_call: { pick_size: done }
  done:
    agent:
      prompt: Thank the caller for the {size} pizza.
`;

describe("a flow's model, language and recording settings, and its parameter details", () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 40 },
    transcripts: ['A large one please'],
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['pick_size'] }, respond: { text: 'Which size would you like?' } },
      { when: { lastRole: 'user', toolsOffered: ['pick_size'] }, respond: { toolCalls: [{ name: 'pick_size', arguments: { size: 'large' } }] } },
      { when: { lastRole: 'tool' }, respond: { text: 'Thanks for ordering a large pizza.' } },
    ],
  });
  let flowId: string;
  beforeAll(async () => {
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Pizza settings', FLOW);
    await synthesizeSpeech('A large one please');
  });

  it('reach the model, speech recognition and the recorder', { timeout: 45_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    const started = await client.waitFor('session_started');
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Which size would you like?', 15_000);
    await client.waitFor('agent_stopped_speaking', undefined, 15_000);
    await client.speak('A large one please', { silenceAfterMs: 1_500 });
    const moved = await client.waitFor('flow_state', (e) => e.state === 'done', 20_000);
    expect(moved.variables).toMatchObject({ size: 'large' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Thanks for ordering a large pizza.', 15_000);

    // The flow's settings.llm, in every request to the model API.
    const requests = chatRequests(rig).filter((r) => r.messages.some((m) => m.role === 'system' && String(m.content).includes('pizza orders')));
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) expect(request as { model?: string; temperature?: number }).toMatchObject({ model: 'flow-model-7', temperature: 0.4 });
    // The parameter's description and enum, as JSON Schema in the tool given to the model.
    const tools = (requests[0] as { tools?: Array<{ function: { name: string; parameters: { properties: Record<string, unknown> } } }> }).tools ?? [];
    expect(tools.map((t) => t.function.name)).toEqual(['pick_size']);
    expect(tools[0]!.function.parameters.properties.size).toEqual({ type: 'string', description: 'The pizza size the caller said.', enum: ['small', 'large'] });

    // The caller was transcribed in the flow's language.
    const listens = rig.deepgram.requests.filter((r) => r.path === '/v1/listen');
    expect(listens.length).toBeGreaterThan(0);
    for (const listen of listens) expect(listen.query?.language).toBe('de');

    // settings.recording: the call is recorded though the session did not ask (record absent).
    client.send({ type: 'end' });
    await client.waitFor('session_ended', undefined, 15_000);
    await client.closed;
    const id = started.session_id;
    await expect
      .poll(async () => (await rig.server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.account.apiKey })).body.recording, { timeout: 15_000 })
      .toMatchObject({ url: expect.stringMatching(new RegExp(`/v1/sessions/${id}/recording$`)), format: 'audio/wav' });
    // Read while the call is still live, so the file grows as it is served: the server once sent
    // more than the content-length it promised, and the client's connection was left mid-body
    // (the server's close then waited ~70 s for it; the afterAll hook timed out under load).
    const response = await fetch(`${rig.server.url}/v1/sessions/${id}/recording`, { headers: { 'x-service-key': rig.account.apiKey } });
    expect(response.status).toBe(200);
    const wav = Buffer.from(await response.arrayBuffer());
    expect(wav.length).toBe(Number(response.headers.get('content-length')));
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    // Both sides of the call are in it: more than the greeting's second or so of audio.
    expect((wav.length - 44) / 4 / 16_000).toBeGreaterThan(1);
  });
});
