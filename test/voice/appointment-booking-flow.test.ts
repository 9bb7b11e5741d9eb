import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../server/security/webhook-signature.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import { startAvailabilityService, type AvailabilityService } from '../support/availability-service.ts';
import { createFlow } from '../support/server.ts';
import { chatRequests, useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

// The example flow of docs/flows.md#extended-flow-keys end to end over WebSocket, with the provider
// fakes and the practice's availability service on a real port: a disclaimer read first,
// availability checked through a signed http tool whose answer chooses the next state, a global
// "talk to a human", and a flow that ends the call itself.
const BOOKING_YAML = readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;
const CLINIC_TOKEN = 'clinic-token-5f4e3d2c1b';
const DISCLAIMER = 'Welcome to Maple Street Dental. I am an automated assistant, and this call may be recorded for quality.';

describe('the appointment-booking example flow', () => {
  let service: AvailabilityService;
  let flowId: string;
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 20 },
    config: { webhooks: { allowPrivate: true } },
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['check_availability', 'talk_to_human'] }, respond: { text: 'Which day would you like to come in?' } },
      { when: { lastRole: 'user', lastUserText: /human|person/i, toolsOffered: ['talk_to_human'] }, respond: { toolCalls: [{ name: 'talk_to_human', arguments: {} }] } },
      { when: { lastRole: 'user', lastUserText: /monday/i, toolsOffered: ['check_availability'] }, respond: { toolCalls: [{ name: 'check_availability', arguments: { day: 'monday' } }] } },
      { when: { lastRole: 'user', lastUserText: /tuesday/i, toolsOffered: ['check_availability'] }, respond: { toolCalls: [{ name: 'check_availability', arguments: { day: 'tuesday' } }] } },
      { when: { lastRole: 'user', lastUserText: /wednesday/i, toolsOffered: ['check_availability'] }, respond: { toolCalls: [{ name: 'check_availability', arguments: { day: 'wednesday' } }] } },
      { when: { lastRole: 'user', lastUserText: /friday/i, toolsOffered: ['check_availability'] }, respond: { toolCalls: [{ name: 'check_availability', arguments: { day: 'friday' } }] } },
      { when: { lastRole: 'tool', systemIncludes: 'Nothing is free on monday' }, respond: { text: 'Sorry, Monday is full. Which other day would suit you?' } },
      { when: { lastRole: 'tool', systemIncludes: '10:30 on tuesday is free' }, respond: { text: 'Tuesday at 10:30 is free. Shall I book it?' } },
      // The second failed check (Friday's, timed out): the model has nothing to say.
      { when: { lastRole: 'tool', systemIncludes: 'Ask the caller which weekday', nth: 2 }, respond: { text: '' } },
      { when: { lastRole: 'tool', systemIncludes: 'Ask the caller which weekday' }, respond: { text: 'Sorry, I could not check that day. Could you pick another?' } },
      { when: { lastRole: 'user', lastUserText: /yes/i, toolsOffered: ['confirm_booking'] }, respond: { toolCalls: [{ name: 'confirm_booking', arguments: {} }] } },
    ],
  });

  beforeAll(async () => {
    service = await startAvailabilityService({
      monday: { status: 200, json: { available: false, next_state: 'ask_day' } },
      tuesday: { status: 200, json: { available: true, slot: '10:30', next_state: 'offer_slot' } },
      wednesday: { status: 503, json: { error: 'calendar offline' } },
      friday: 'hang',
    });
    const yaml = BOOKING_YAML.replace('https://clinic.example.com/voxflow/availability', service.url);
    expect(parseFlow(yaml).diagnostics).toEqual([]);
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Booking', yaml);
    for (const [name, value] of [['tool_signing_secret', SIGNING_SECRET], ['clinic_api_token', CLINIC_TOKEN]]) {
      const saved = await rig.server.request('PUT', `/v1/secrets/${name}`, { jwt: rig.account.jwt, body: { value } });
      expect(saved.status).toBe(201);
    }
  });
  afterAll(async () => {
    await service?.close();
  });

  async function say(client: VoiceClient, text: string): Promise<void> {
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > lastUserTurn(client), 15_000);
    client.send({ type: 'text', text });
  }
  const lastUserTurn = (client: VoiceClient) => {
    for (let i = client.events.length - 1; i >= 0; i--) {
      const event = client.events[i]!;
      if (event.type === 'transcript' && event.role === 'user') return i;
    }
    return -1;
  };
  const dayOf = (event: { arguments: unknown }) => (event.arguments as { day?: string } | null)?.day;

  it('validates with no diagnostics as shipped', () => {
    expect(parseFlow(BOOKING_YAML).diagnostics).toEqual([]);
  });

  it('reads the disclaimer, checks days through the signed http tool, books a slot and hangs up', { timeout: 60_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId, metadata: { crm_id: 'patient-17' } });
    const disclaimer = await client.waitFor('transcript', (e) => e.role === 'agent');
    expect(disclaimer.text).toBe(DISCLAIMER);
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Which day would you like to come in?');

    await say(client, 'Monday, please.');
    const full = await client.waitFor('tool_result', (e) => dayOf(e) === 'monday', 15_000);
    expect(full).toMatchObject({ name: 'check_availability', ok: true, http_status: 200, from_state: 'welcome', to_state: 'ask_day', result: { available: false }, error: null, source: 'model' });
    expect(full.duration_ms).toBeGreaterThanOrEqual(0);
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Sorry, Monday is full. Which other day would suit you?', 15_000);

    await say(client, 'Tuesday then.');
    await client.waitFor('tool_result', (e) => dayOf(e) === 'tuesday' && e.to_state === 'offer_slot', 15_000);
    const offered = await client.waitFor('flow_state', (e) => e.state === 'offer_slot');
    expect(offered.variables).toMatchObject({ day: 'tuesday', slot: '10:30' });
    expect(offered.prompt).toBe('tuesday at 10:30?');
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Tuesday at 10:30 is free. Shall I book it?', 15_000);

    await say(client, 'Yes, book it.');
    const ended = await client.waitFor('session_ended', undefined, 20_000);
    expect(ended.reason).toBe('flow_ended');
    const agentLines = client.ofType('transcript').filter((e) => e.role === 'agent').map((e) => e.text);
    expect(agentLines.at(-1)).toBe('You are booked for tuesday at 10:30. We look forward to seeing you. Goodbye!');
    // The goodbye was played before the call ended.
    const goodbyeAt = client.events.findIndex((e) => e.type === 'transcript' && e.text.startsWith('You are booked'));
    expect(client.events.slice(goodbyeAt).some((e) => e.type === 'agent_stopped_speaking')).toBe(true);

    // What the service received: the call, the variables, the metadata, signed with the account's secret.
    const requests = service.received.filter((r) => ['monday', 'tuesday'].includes(r.json?.arguments?.day));
    const days = requests.map((r) => r.json.arguments.day);
    expect(days).toEqual(['monday', 'tuesday']);
    const [first] = requests;
    expect(first!.method).toBe('POST');
    expect(first!.headers.authorization).toBe(`Bearer ${CLINIC_TOKEN}`);
    expect(first!.json).toEqual({
      tool: 'check_availability',
      arguments: { day: 'monday' },
      variables: { day: 'monday' },
      metadata: { crm_id: 'patient-17' },
      session_id: expect.any(String),
    });
    for (const request of requests) {
      const headers = { 'webhook-id': String(request.headers['webhook-id']), 'webhook-timestamp': String(request.headers['webhook-timestamp']), 'webhook-signature': String(request.headers['webhook-signature']) };
      expect(verifyWebhook(SIGNING_SECRET, headers, request.body)).toBe(true);
      expect(request.body).not.toContain(CLINIC_TOKEN);
    }

    // The model read the service's answer as the tool result, and was not asked to speak in the
    // state that ends the call.
    const requestsToModel = chatRequests(rig);
    const toolMessages = requestsToModel.flatMap((r) => r.messages).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolMessages.some((content) => content.includes('"slot":"10:30"') && content.includes('"state":"offer_slot"'))).toBe(true);
    const systemOf = (r: (typeof requestsToModel)[number]) => String(r.messages.find((m) => m.role === 'system')?.content ?? '');
    expect(requestsToModel.some((r) => systemOf(r).includes('The booking is done'))).toBe(false);
    // The flow's own settings.llm reached the model API.
    for (const r of requestsToModel.filter((r) => systemOf(r).includes('Maple Street Dental'))) expect((r as { temperature?: number }).temperature).toBe(0.2);

    // The stored session keeps each answer beside the calls, so "save as test" can replay them.
    const sessionId = client.ofType('session_started')[0]!.session_id;
    await expect
      .poll(async () => {
        const detail = await rig.server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: rig.account.apiKey });
        return (detail.body.tool_results as Array<{ name: string; ok: boolean; http_status: number; result: unknown; to_state: string }> | undefined)?.map(({ name, ok, http_status, result, to_state }) => ({ name, ok, http_status, result, to_state }));
      }, { timeout: 15_000 })
      .toEqual([
        { name: 'check_availability', ok: true, http_status: 200, result: { available: false, next_state: 'ask_day' }, to_state: 'ask_day' },
        { name: 'check_availability', ok: true, http_status: 200, result: { available: true, slot: '10:30', next_state: 'offer_slot' }, to_state: 'offer_slot' },
      ]);
  });

  it('hands over to a person from any state through the global tool, and ends the call', { timeout: 30_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Which day would you like to come in?', 15_000);
    await say(client, 'Can I talk to a human?');
    const call = await client.waitFor('tool_call', (e) => e.name === 'talk_to_human');
    expect(call).toMatchObject({ status: 'accepted', from_state: 'welcome', to_state: 'human_handoff' });
    const ended = await client.waitFor('session_ended', undefined, 20_000);
    expect(ended.reason).toBe('flow_ended');
    expect(client.ofType('transcript').filter((e) => e.role === 'agent').at(-1)?.text).toBe('Of course. I will connect you with a member of our team now. Please hold.');
  });

  it('gives the model an error result when the service fails, and the call goes on in the same state', { timeout: 30_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Which day would you like to come in?', 15_000);
    await say(client, 'Wednesday?');
    const failed = await client.waitFor('tool_result', (e) => dayOf(e) === 'wednesday', 15_000);
    expect(failed).toMatchObject({ ok: false, http_status: 503, result: null, from_state: 'welcome', to_state: 'welcome' });
    expect(failed.error).toContain('503');
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Sorry, I could not check that day. Could you pick another?', 15_000);
    expect(client.ofType('session_ended')).toEqual([]);
    // The model was told what went wrong.
    const toolMessages = chatRequests(rig).flatMap((r) => r.messages).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(toolMessages.some((content) => content.includes('"ok":false') && content.includes('503'))).toBe(true);
  });

  it('gives a slow service an error result at the tool\'s timeout, and speaks a fallback when the model says nothing', { timeout: 30_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Which day would you like to come in?', 15_000);
    await say(client, 'Friday?');
    const late = await client.waitFor('tool_result', (e) => dayOf(e) === 'friday', 15_000);
    expect(late).toMatchObject({ ok: false, http_status: null, to_state: 'welcome' });
    expect(late.error).toContain('no answer within 3000 ms');
    // Bounded by the flow's timeout_ms (3000), give or take the loaded machine.
    expect(late.duration_ms).toBeGreaterThanOrEqual(2_900);
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === "Sorry, I couldn't look that up just now. Could we try again?", 15_000);
    expect(client.ofType('session_ended')).toEqual([]);
  });
});
