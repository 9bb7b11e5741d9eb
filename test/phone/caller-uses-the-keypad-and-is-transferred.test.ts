// A caller on a phone menu: keys move the flow (a declared move per key), a number is collected
// into a variable, and the key for "a person" hands the call to the front desk through the
// carrier's API (a cold transfer: Voxflow leaves, the call goes on without it). When the carrier
// refuses the transfer, the caller is taken back to the menu. Every key and the transfer are on
// the session's timeline; the transfer target is on the session and in session.ended.
import { describe, expect, it, vi } from 'vitest';
import { sendVoiceWebhook } from '../fakes/carriers/voice-webhook.ts';
import { FRONT_DESK, PHONE_MENU_YAML } from '../support/phone-menu-flow.ts';
import { BUSINESS_NUMBER, CALLER_NUMBER, carriersToTest, usePhoneRig } from '../support/phone-rig.ts';

type TimelineEvent = { type: string; event: Record<string, unknown> };

// The carriers' suites run at once, each on a rig of its own (server, account, carrier): the calls
// are mostly real-time waits. A suite's own calls run one after another.
describe.concurrent.each(carriersToTest(['twilio', 'telnyx', 'plivo'] as const, 'plivo'))('a %s caller on a keypad menu', (carrier) => {
  const rig = usePhoneRig(carrier, { llm: 'none', transcripts: [], flowYaml: PHONE_MENU_YAML });
  const detail = async (id: string) => (await rig().server.request('GET', `/v1/sessions/${id}`, { apiKey: rig().account.apiKey })).body;
  const events = async (id: string): Promise<TimelineEvent[]> => (await rig().server.request('GET', `/v1/sessions/${id}/events?limit=500`, { apiKey: rig().account.apiKey })).body.events;
  const liveSession = () => rig().liveSession().then((s) => s.id);
  const inState = (id: string, state: string) =>
    vi.waitFor(async () => expect((await detail(id)).path.at(-1)?.state).toBe(state), { timeout: 15_000, interval: 100 });

  it.sequential('moves on keys, collects the account number, and hands the call to the front desk', { timeout: 60_000 }, async () => {
    const callId = { twilio: 'CA22222222222222222222222222222222', telnyx: 'v3:keypad-call', plivo: '2b4e28ba-2fa1-11d2-883f-0016d3cca427' }[carrier];
    const stream = await rig().call(callId);
    const id = await liveSession();
    await inState(id, 'menu');

    stream.pressDigit('1');
    await inState(id, 'account');
    for (const digit of ['0', '4', '2', '7', '#']) stream.pressDigit(digit);
    await inState(id, 'thanks');
    expect((await detail(id)).variables.account_number).toBe('0427');

    stream.pressDigit('0');
    await vi.waitFor(async () => expect(await detail(id)).toMatchObject({ status: 'ended', end_reason: 'transferred', transferred_to: FRONT_DESK }), { timeout: 20_000, interval: 100 });
    // The carrier was asked to move the live call to the front desk, and not to hang it up.
    const call = rig().api.calls.get(callId)!;
    expect(call.status).toBe('in-progress');
    if (carrier === 'plivo') {
      // Plivo was pointed at a URL of ours, and fetched the dial of the front desk from it, once.
      expect(rig().api.requests.filter((r) => r.method === 'POST' && (r.body as { aleg_url?: string }).aleg_url)).toHaveLength(1);
      await vi.waitFor(() => expect(call.transferFetched?.status).toBe(200), { timeout: 10_000, interval: 50 });
      expect(call.transferFetched!.body).toMatch(new RegExp(`<Dial callerId="\\${BUSINESS_NUMBER}"><Number>\\${FRONT_DESK}</Number></Dial>`));
      // The address served its markup once: fetched again (a replay), it is gone.
      const again = await sendVoiceWebhook(rig().signer, call.redirectedTo!, { CallUUID: callId, CallStatus: 'in-progress', Direction: 'inbound', From: CALLER_NUMBER, To: BUSINESS_NUMBER });
      expect(again.status).toBe(404);
    } else {
      const transfer = rig().api.requests.filter((r) => r.method === 'POST' && JSON.stringify(r.body).includes(FRONT_DESK.slice(1)));
      expect(transfer.length).toBe(1);
    }
    const timeline = await events(id);
    const keys = timeline.filter((e) => e.type === 'dtmf').map((e) => e.event.digits);
    expect(keys).toEqual(['1', '0', '4', '2', '7', '#', '0']);
    const moves = timeline.filter((e) => e.type === 'dtmf').flatMap((e) => (e.event.moves as Array<{ via: string; to_state: string }>).map((m) => `${m.via}→${m.to_state}`));
    expect(moves).toEqual(['key 1→account', 'collect account_number→thanks', 'key 0→human']);
    expect(timeline.filter((e) => e.type === 'dtmf').map((e) => e.event.source)).toEqual(Array(7).fill('caller'));
    expect(timeline.filter((e) => e.type === 'transfer').map((e) => e.event.status)).toEqual(['started', 'completed']);
    await stream.waitForClose();
  });

  it.sequential('takes the caller back to the menu when the carrier refuses the transfer', { timeout: 60_000 }, async () => {
    const callId = { twilio: 'CA33333333333333333333333333333333', telnyx: 'v3:refused-transfer', plivo: '3b4e28ba-2fa1-11d2-883f-0016d3cca427' }[carrier];
    const stream = await rig().call(callId);
    const id = await liveSession();
    await inState(id, 'menu');
    const asked = rig().api.requests.length;
    rig().api.setFault({ status: 400, times: 1 });
    try {
      stream.pressDigit('0');
      await vi.waitFor(async () => expect((await events(id)).filter((e) => e.type === 'transfer').map((e) => e.event.status)).toEqual(['started', 'failed']), { timeout: 20_000, interval: 100 });
    } finally {
      rig().api.setFault(undefined);
    }
    // The carrier was asked, once (a 400 is not retried), and said no; the caller heard why not from the flow.
    expect(rig().api.requests.length).toBe(asked + 1);
    const failed = (await events(id)).find((e) => e.type === 'transfer' && e.event.status === 'failed')!;
    expect(failed.event.reason).toMatch(new RegExp(carrier));
    await inState(id, 'menu');
    expect((await detail(id)).status).toBe('connected');
    await stream.hangUp();
    await vi.waitFor(async () => expect(await detail(id)).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up', transferred_to: null }), { timeout: 10_000 });
  });
});
