import { beforeAll, describe, expect, it } from 'vitest';
import { synthesizeSpeech } from '../support/speech.ts';
import { createFlow } from '../support/server.ts';
import { chatRequests, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

// What a flow's states do on entering, and the flow's idle setting
// (docs/flows.md#extended-flow-keys), heard over WebSocket with the provider fakes: a disclaimer
// the caller cannot talk over, a state that waits for the caller (respond: false), one that makes
// the model forget (context: reset), and reprompts after silence that end in hanging up.
const DISCLAIMER =
  'Before we start: this line is answered by an automated assistant, calls are recorded, and nothing said here is medical advice.';

const FLOW = `id: entry-demo
version: "1.0.0"
initial_state: intro
settings:
  base_system_prompt: You help callers.
  voice: { provider: openai, voice: nova }
  stt: { model: nova-2-phonecall }
  idle: { after_secs: 1.5, reprompt: "Are you still there?", max_reprompts: 2 }
states:
  intro:
    on_enter:
      say: "${DISCLAIMER}"
    interruptible: false
    endpointing_ms: 1200
    agent:
      prompt: Ask what the caller needs; call go_quiet if they want to think.
      tools: [go_quiet, start_fresh]
    tools:
      go_quiet: { description: The caller wants a moment. }
      start_fresh: { description: Start a new topic. }
    transitions:
      on_tool_call: { go_quiet: waiting, start_fresh: fresh }
  waiting:
    respond: false
    on_enter:
      set: { mood: patient }
    agent:
      prompt: The caller is thinking; wait, mood {mood}.
  fresh:
    context: reset
    on_enter:
      say: Starting fresh.
    agent:
      prompt: FRESH-STATE. Greet the caller again.
`;

describe("a flow's on-entry speech, its waiting and forgetting states, and its idle reprompts", () => {
  const rig = useVoiceRig({
    tts: 'openai',
    // 100 ms a word: the disclaimer plays for about two seconds.
    openai: { msPerWord: 100 },
    transcripts: ['Hold on a moment please'],
    rules: [
      { when: { lastRole: 'none', systemIncludes: 'Ask what the caller needs' }, respond: { text: 'How can I help?' } },
      { when: { lastRole: 'user', lastUserText: /think/i }, respond: { toolCalls: [{ name: 'go_quiet', arguments: {} }] } },
      { when: { lastRole: 'user', lastUserText: /fresh/i }, respond: { toolCalls: [{ name: 'start_fresh', arguments: {} }] } },
      { when: { systemIncludes: 'FRESH-STATE' }, respond: { text: 'Hello again.' } },
      { when: { lastRole: 'user' }, respond: { text: 'Okay.' } },
    ],
  });
  let flowId: string;
  beforeAll(async () => {
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Entry demo', FLOW);
    await synthesizeSpeech('Hold on a moment please');
  });

  it('reads the disclaimer whole even when the caller talks over it, then lets the model speak', { timeout: 30_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    const first = await client.waitFor('transcript', (e) => e.role === 'agent');
    expect(first.text).toBe(DISCLAIMER);
    await client.waitFor('agent_started_speaking');
    while (client.audioFrames.length < 20) await new Promise((r) => setTimeout(r, 20));
    await client.speak('Hold on a moment please', { speed: 2 });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'How can I help?', 15_000);
    await client.waitFor('agent_stopped_speaking', undefined, 15_000);
    // Nothing was cut, and what the caller said over the disclaimer was not taken as a turn.
    expect(client.ofType('interrupted')).toEqual([]);
    expect(client.ofType('transcript').filter((e) => e.role === 'user')).toEqual([]);
    // The disclaimer played in full: about 100 ms a word, 20 ms a frame.
    const words = DISCLAIMER.split(/\s+/).length;
    expect(client.audioFrames.length).toBeGreaterThanOrEqual(words * 4);
    // Every line was spoken in the flow's own voice (settings.voice), not the server's alloy.
    const speech = rig.openai.requests.filter((r) => r.path === '/v1/audio/speech').map((r) => (r.body as { voice?: string }).voice);
    expect(speech.length).toBeGreaterThanOrEqual(2);
    expect(new Set(speech)).toEqual(new Set(['nova']));
    client.close();
  });

  it('ends the caller\'s turn after the state\'s endpointing_ms of silence, not the server\'s 500 ms', { timeout: 30_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'How can I help?', 15_000);
    await client.waitFor('agent_stopped_speaking', undefined, 15_000);
    await client.speak('Hold on a moment please', { silenceAfterMs: 2_500 });
    const metrics = await client.waitFor('metrics', (e) => e.endpointing_ms !== null, 15_000);
    // Measured from the last voiced frame to the turn's end: the state's 1200 ms, not 500.
    expect(metrics.endpointing_ms).toBeGreaterThanOrEqual(1_100);
    // The caller was transcribed with the flow's own model (settings.stt).
    const listens = rig.deepgram.requests.filter((r) => r.path === '/v1/listen');
    expect(listens.length).toBeGreaterThan(0);
    for (const listen of listens) expect(listen.query?.model).toBe('nova-2-phonecall');
    client.close();
  });

  it('waits for the caller in a respond: false state, and a reset state makes the model forget', { timeout: 30_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'How can I help?', 15_000);
    const before = chatRequests(rig).length;
    client.send({ type: 'text', text: 'Let me think.' });
    const waiting = await client.waitFor('flow_state', (e) => e.state === 'waiting', 15_000);
    expect(waiting.variables).toMatchObject({ mood: 'patient' });
    // The move's model request was the only one: in `waiting` the model was not asked to speak.
    await client.waitFor('metrics', (e) => client.events.indexOf(e) > client.events.indexOf(waiting), 15_000);
    expect(chatRequests(rig).length - before).toBe(1);
    client.close();

    const second = await rig.connect({ flow_id: flowId });
    await second.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'How can I help?', 15_000);
    second.send({ type: 'text', text: 'Something fresh please.' });
    await second.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Starting fresh.', 15_000);
    await second.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Hello again.', 15_000);
    const fresh = chatRequests(rig).filter((r) => r.messages.some((m) => m.role === 'system' && String(m.content).includes('FRESH-STATE')));
    expect(fresh).toHaveLength(1);
    // What came before the reset is gone; the entry line is remembered as said.
    expect(fresh[0]!.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'assistant', content: 'Starting fresh.' }]);
    second.close();
  });

  it('reprompts a silent caller after idle.after_secs of silence, up to max_reprompts, then hangs up', { timeout: 30_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'How can I help?', 15_000);
    // The disclaimer and the question play for longer than after_secs: the silence that counts
    // begins when the agent stops, not when the call began, so the caller gets the whole 1.5 s.
    await client.waitFor('agent_stopped_speaking', undefined, 15_000);
    const quietAt = performance.now();
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Are you still there?', 15_000);
    expect(performance.now() - quietAt).toBeGreaterThan(1_300);
    const ended = await client.waitFor('session_ended', undefined, 20_000);
    expect(ended.reason).toBe('idle');
    const reprompts = client.ofType('transcript').filter((e) => e.role === 'agent' && e.text === 'Are you still there?');
    expect(reprompts).toHaveLength(2);
  });
});
