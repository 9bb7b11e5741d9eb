// The business learns what a call produced without asking: the guessing game is played to `won`
// over a backend-started WebSocket session, and the backend's webhook receiver gets a signed
// `session.ended` carrying exactly what GET /v1/sessions/{id} returns, metadata included, and the
// session's moves and tool calls, each of which carries the metadata too.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, useVoiceRig } from '../support/voice-server.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.ts';

describe('what a call leaves behind, sent to the backend', () => {
  const rig = useVoiceRig({ rules: GUESSING_GAME_RULES, tts: 'openai', openai: { msPerWord: 20 }, config: { webhooks: { allowPrivate: true } } });
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('a call played to won arrives as a signed session.ended with the same data the API returns', { timeout: 45_000 }, async () => {
    const hook = await rig.server.request('POST', '/v1/webhooks', { apiKey: rig.account.apiKey, body: { url: receiver.url } });
    expect(hook.status).toBe(201);

    const client = await rig.connect({ flow_id: rig.flowId, metadata: { crm_id: 'c-42' } });
    const started = await client.waitFor('session_started');
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: "I'm ready" });
    await client.waitFor('flow_state', (e) => e.state === 'playing');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /first question/.test(e.text));
    client.send({ type: 'text', text: 'Is it an animal?' });
    await client.waitFor('tool_call', (e) => e.name === 'record_answer');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /next question/.test(e.text));
    client.send({ type: 'text', text: 'Is it a cat?' });
    await client.waitFor('flow_state', (e) => e.state === 'won');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;

    const id = started.session_id;
    const ofThisCall = (r: ReceivedWebhook) => r.json?.data?.session_id === id;
    const ended = await receiver.waitFor((r) => ofThisCall(r) && r.json.type === 'session.ended', 15_000, 'session.ended');
    const payload = new Webhook(hook.body.secret).verify(ended.body, { 'webhook-id': ended.id, 'webhook-timestamp': ended.timestamp, 'webhook-signature': ended.signature }) as any;

    const detail = await rig.server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.account.apiKey });
    expect(payload.type).toBe('session.ended');
    expect(payload.data).toEqual({ session_id: id, ...detail.body });
    expect(payload.data).toMatchObject({ status: 'ended', end_reason: 'client_ended', metadata: { crm_id: 'c-42' }, variables: { secret_thing: 'a cat' } });
    expect(payload.data.path.map((p: { state: string }) => p.state)).toEqual(['setup', 'playing', 'won']);
    expect(payload.data.transcript.filter((t: { role: string }) => t.role === 'user').map((t: { text: string }) => t.text)).toEqual(["I'm ready", 'Is it an animal?', 'Is it a cat?']);

    // Every live event came too, each with the call's metadata and stamped no later than the end.
    // (Deliveries run in parallel, so a receiver orders by `timestamp`, not by arrival.)
    const live = receiver.received.filter((r) => ofThisCall(r) && r.json.type !== 'session.ended');
    const label = (r: ReceivedWebhook) => `${r.json.type}:${r.json.data.name ?? r.json.data.to_state ?? 'start'}`;
    expect(live.map(label).sort()).toEqual(
      [
        'session.started:start',
        'session.tool_called:begin_game',
        'session.state_changed:playing',
        'session.tool_called:record_answer',
        'session.tool_called:guess_correct',
        'session.state_changed:won',
      ].sort(),
    );
    for (const request of live) {
      expect(request.json.data.metadata).toEqual({ crm_id: 'c-42' });
      expect(Date.parse(request.json.timestamp)).toBeLessThanOrEqual(Date.parse(payload.timestamp));
    }
  });
});
