// A backend places a call with POST /v1/calls: the carrier is asked to ring the callee from one of
// the account's numbers, its progress lands on the session (and never moves back), the answered
// call opens its stream and the agent speaks first; a busy line ends the session charging
// nothing; numbers on the do-not-call list, numbers the account does not hold and calls past the
// account's limits are refused before the carrier hears of them.
import { describe, expect, it, vi } from 'vitest';
import { FakeCarrierStream, streamTargetFromMarkup } from '../fakes/carriers/media-stream-client.ts';
import { BUSINESS_NUMBER, carriersToTest, usePhoneRig } from '../support/phone-rig.ts';
import { GUESSING_GAME_RULES } from '../support/voice-server.ts';

const CALLEE = '+15550107777';

describe.each(carriersToTest(['twilio', 'telnyx', 'plivo'] as const, 'plivo'))('an outbound %s call', (carrier) => {
  const rig = usePhoneRig(carrier, { rules: GUESSING_GAME_RULES, transcripts: [], config: { outboundCalls: { concurrent: 2, perMinute: 10 } } });
  const place = (body: Record<string, unknown>) => rig().server.request('POST', '/v1/calls', { apiKey: rig().account.apiKey, body: { flow_id: rig().flowId, from: BUSINESS_NUMBER, to: CALLEE, ...body } });
  const detail = async (id: string) => (await rig().server.request('GET', `/v1/sessions/${id}`, { apiKey: rig().account.apiKey })).body;

  it('rings the callee from the business number, follows its progress, and talks once it is answered', { timeout: 60_000 }, async () => {
    const placed = await place({ variables: { caller_name: 'Ann' }, metadata: { crm_id: '42' } });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ call_status: 'queued', carrier, from: BUSINESS_NUMBER, to: CALLEE });
    const callId = placed.body.carrier_call_id as string;
    const call = rig().api.calls.get(callId)!;
    expect(call).toMatchObject({ from: BUSINESS_NUMBER, to: CALLEE });
    expect(await detail(placed.body.session_id)).toMatchObject({ direction: 'outbound', call_status: 'queued', carrier_call_id: callId, metadata: { crm_id: '42' } });

    expect((await rig().api.sendStatus(callId, rig().signer, 'ringing')).status).toBe(204);
    expect((await detail(placed.body.session_id)).call_status).toBe('ringing');
    const answered = await rig().api.answerPlacedCall(callId, rig().signer);
    expect(answered.status).toBe(200);
    await rig().api.sendStatus(callId, rig().signer, 'answered');
    // A late, repeated `ringing` does not move the status back.
    await rig().api.sendStatus(callId, rig().signer, 'ringing');
    expect((await detail(placed.body.session_id)).call_status).toBe('answered');

    // Plivo names the answered call by its CallUUID, no longer by the RequestUUID it was placed with.
    const answeredCallId = call.callId;
    if (carrier === 'plivo') expect((await detail(placed.body.session_id)).carrier_call_id).toBe(answeredCallId);
    const stream = await FakeCarrierStream.connect({ carrier, target: streamTargetFromMarkup(carrier, answered.body), callId: answeredCallId, from: BUSINESS_NUMBER, to: CALLEE });
    await vi.waitFor(() => expect(stream.receivedAudio().length).toBeGreaterThan(4000), { timeout: 30_000, interval: 100 });
    await stream.hangUp();
    await rig().api.sendStatus(callId, rig().signer, 'completed');
    await vi.waitFor(async () => expect(await detail(placed.body.session_id)).toMatchObject({ status: 'ended', call_status: 'completed', end_reason: 'caller_hung_up' }), { timeout: 10_000 });
  });

  it('ends the session of a call that met a busy line, charging nothing', async () => {
    const placed = await place({});
    expect(placed.status).toBe(201);
    await rig().api.sendStatus(placed.body.carrier_call_id, rig().signer, 'busy');
    expect(await detail(placed.body.session_id)).toMatchObject({ status: 'ended', end_reason: 'busy', call_status: 'busy', credits_charged_usd_cents: 0 });
  });

  it('refuses a callee on the do-not-call list and a number the account does not hold, before the carrier hears of them', async () => {
    const before = rig().api.requests.length;
    const listed = await rig().server.request('POST', '/v1/do-not-call', { jwt: rig().account.jwt, body: { number: '+15550108888' } });
    expect(listed.status).toBe(201);
    const refused = await place({ to: '+15550108888' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('do_not_call');
    const notOurs = await place({ from: '+15550109999' });
    expect(notOurs.status).toBe(409);
    expect(notOurs.body.error.code).toBe('phone_number_not_outbound');
    const badNumber = await place({ to: '555-0100' });
    expect(badNumber.status).toBe(422);
    expect(rig().api.requests.length).toBe(before);
  });

  it('refuses a call past the account\'s concurrent outbound calls with 429 and when to retry', async () => {
    const first = await place({});
    const second = await place({});
    expect([first.status, second.status]).toEqual([201, 201]);
    const third = await place({});
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe('too_many_calls');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const placed of [first, second]) await rig().api.sendStatus(placed.body.carrier_call_id, rig().signer, 'no-answer');
    expect((await place({})).status).toBe(201);
  });

  it('fails the call, and says so, when the carrier refuses to place it', async () => {
    rig().api.setFault({ status: 500, times: 10 });
    try {
      const placed = await place({});
      expect(placed.status).toBe(502);
      expect(placed.body.error.code).toBe('carrier_unavailable');
    } finally {
      rig().api.setFault(undefined);
    }
  });
});
