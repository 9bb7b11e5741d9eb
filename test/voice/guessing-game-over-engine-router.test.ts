import { describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, useVoiceRig } from '../support/voice-server.ts';
import { connectVoice, wsUrl, type VoiceClient } from '../support/voice-client.ts';

// The engine router's door (/ws?mode=flow&program_id=) runs the same flow as the hosted API's
// /v1/ws/{token}, whichever credential opens it.
describe('the guessing game over the engine router /ws', () => {
  const rig = useVoiceRig({ rules: GUESSING_GAME_RULES, tts: 'openai', openai: { msPerWord: 30 } });

  async function connect(path: string, headers: Record<string, string> = {}): Promise<VoiceClient> {
    return rig.track(await connectVoice(wsUrl(rig.server.url, path), headers));
  }

  /** Types a turn once the agent has finished speaking its last line. */
  async function typeWhenAgentIsQuiet(client: VoiceClient, text: string): Promise<void> {
    const lastAgentLine = client.events.map((e) => e.type === 'transcript' && e.role === 'agent').lastIndexOf(true);
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > lastAgentLine);
    client.send({ type: 'text', text });
  }

  /** Plays setup → playing → won with typed turns and checks what the app would show. */
  async function playToWin(client: VoiceClient): Promise<void> {
    const hello = await client.waitFor('session_started');
    expect(hello).toMatchObject({ mode: 'flow', flow_id: rig.flowId, sample_rate: 16000 });
    await client.waitFor('transcript', (e) => e.role === 'agent' && /ready/.test(e.text));
    await typeWhenAgentIsQuiet(client, "I'm ready");
    await client.waitFor('transcript', (e) => e.role === 'agent' && /first question/.test(e.text));
    await typeWhenAgentIsQuiet(client, 'Is it an animal?');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /next question/.test(e.text));
    await typeWhenAgentIsQuiet(client, 'Is it a cat?');
    const won = await client.waitFor('flow_state', (e) => e.state === 'won');
    expect(won.prompt).toBe('You got it: a cat! Found in 1 questions.');
    expect(client.ofType('flow_state').map((e) => e.state)).toEqual(['setup', 'playing', 'playing', 'won']);
    expect(client.ofType('tool_call').map((e) => `${e.from_state}:${e.name}:${e.status}→${e.to_state}`)).toEqual([
      'setup:begin_game:accepted→playing',
      'playing:record_answer:accepted→playing',
      'playing:guess_correct:accepted→won',
    ]);
    expect(client.audioFrames.length).toBeGreaterThan(20);
    client.send({ type: 'end' });
    expect((await client.waitFor('session_ended')).reason).toBe('client_ended');
    expect((await client.closed).code).toBe(1000);
  }

  it('plays to a win with ?access_token=<jwt>, and the session is listed and charged like a hosted one', { timeout: 20_000 }, async () => {
    const client = await connect(`/ws?mode=flow&program_id=${rig.flowId}&access_token=${rig.account.jwt}`);
    await playToWin(client);
    const sessions = await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt });
    const id = client.ofType('session_started')[0]!.session_id;
    // Deepgram STT + OpenAI LLM + OpenAI speech on the server's keys, a minute each; the game was
    // typed, so speech to text was never used and never charged: 2 cents for the first minute.
    expect(sessions.body.find((s: { id: string }) => s.id === id)).toMatchObject({ flow_id: rig.flowId, mode: 'flow', transport: 'websocket', status: 'ended', end_reason: 'client_ended', credits_charged_usd_cents: 2 });
  });

  it('plays to a win with the X-Service-Key header', { timeout: 20_000 }, async () => {
    const client = await connect(`/ws?mode=flow&program_id=${rig.flowId}`, { 'x-service-key': rig.account.apiKey });
    await playToWin(client);
  });

  it('plays to a win with ?session_token= from POST /v1/sessions, and the token works once', { timeout: 20_000 }, async () => {
    const started = await rig.server.request('POST', '/v1/sessions', { apiKey: rig.account.apiKey, body: { flow_id: rig.flowId } });
    expect(started.status).toBe(200);
    const token = started.body.session_token as string;
    // The claimed session's own flow applies; the query needs no program_id.
    const client = await connect(`/ws?session_token=${token}`);
    await playToWin(client);
    await expect(connect(`/ws?session_token=${token}`)).rejects.toMatchObject({ status: 401 });
    await expect(connect(`/ws?mode=flow&program_id=${rig.flowId}&session_token=${token}`)).rejects.toMatchObject({ status: 401 });
  });
});
