// A warm transfer on a phone call: the caller presses 0 for the front desk, hears that they are
// being connected and asked to hold, while Voxflow calls the front desk through the carrier from
// the business's number. When the person answers, the carrier fetches the leg's answer URL and
// gets a summary of the call (in the carrier's own voice, to the person only) followed by a
// conference; the caller's live call is redirected into the same conference, and Voxflow leaves.
// When nobody answers, or the carrier cannot call the person, the caller is still on the line
// and the agent takes them back to the menu. The tests over each carrier: warm-transfer-to-a-person.ts.
import { describe, expect, it, vi } from 'vitest';
import { carriersToTest, usePhoneRig } from '../support/phone-rig.ts';
import { FRONT_DESK } from '../support/phone-menu-flow.ts';
import { describeNobodyPicksUp, describeWarmTransfer, WARM_MENU_YAML } from './warm-transfer-to-a-person.ts';

// Over Telnyx here (and on PostgreSQL); over Twilio and Plivo in phone/other-carriers/, side by side.
describeWarmTransfer(carriersToTest(['telnyx'] as const, 'telnyx'));

// Beside the suites above and below: each runs on a rig of its own.
describe.concurrent('a warm transfer whose summary the session\'s model writes', () => {
  const MODEL_SUMMARY = 'Ann is calling about her account, number 0427, and would like to move her Tuesday cleaning.';
  const rig = usePhoneRig('twilio', {
    transcripts: [],
    flowYaml: WARM_MENU_YAML,
    rules: [{ when: { systemIncludes: 'handing this phone call' }, respond: { text: MODEL_SUMMARY } }],
  });

  it('tells the person what the model wrote from the conversation, and bills the model once', { timeout: 90_000 }, async () => {
    const { server, account, api, openai } = rig();
    const balance = async () => (await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey })).body.balance_usd_cents as number;
    const before = await balance();
    const callId = 'CA77777777777777777777777777777777';
    const stream = await rig().call(callId);
    const id = await rig().liveSession().then((s) => s.id);
    const state = async () => (await server.request('GET', `/v1/sessions/${id}`, { apiKey: account.apiKey })).body.path.at(-1)?.state;
    await vi.waitFor(async () => expect(await state()).toBe('menu'), { timeout: 15_000, interval: 100 });
    stream.pressDigit('1');
    await vi.waitFor(async () => expect(await state()).toBe('account'), { timeout: 15_000, interval: 100 });
    for (const digit of ['0', '4', '2', '7', '#']) stream.pressDigit(digit);
    await vi.waitFor(async () => expect(await state()).toBe('thanks'), { timeout: 15_000, interval: 100 });
    stream.pressDigit('0');
    const leg = await vi.waitFor(() => api.placedCallTo(FRONT_DESK) ?? expect.fail('the front desk was not called yet'), { timeout: 20_000, interval: 100 });
    // The model was asked with the conversation so far.
    await vi.waitFor(() => expect(openai.requests.some((r) => JSON.stringify(r.body).includes('handing this phone call'))).toBe(true), { timeout: 15_000, interval: 100 });
    const asked = openai.requests.find((r) => JSON.stringify(r.body).includes('handing this phone call'))!;
    expect(JSON.stringify(asked.body)).toContain('The caller entered 0427');

    const answered = await api.answerPlacedCall(leg.callId, rig().signer);
    expect(answered.body).toContain(`<Say>${MODEL_SUMMARY}</Say>`);
    const ended = await vi.waitFor(
      async () => {
        const body = (await server.request('GET', `/v1/sessions/${id}`, { apiKey: account.apiKey })).body;
        expect(body).toMatchObject({ status: 'ended', end_reason: 'transferred', transferred_to: FRONT_DESK });
        return body;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(ended.credits_charged_usd_cents).toBeGreaterThan(0);
    expect(before - (await balance())).toBe(ended.credits_charged_usd_cents);
  });
});

// A timer of the server's own: the store writes a failed transfer the same as the unanswered one above, which runs on PostgreSQL.
describeNobodyPicksUp(carriersToTest(['telnyx'] as const, null));
