// What the warm-transfer phone tests share, one file per carrier so they run side by side (each
// rings its own rig; within a file, its suites run at once, each on a rig of its own): the menu
// flow whose 0 hands the caller to the front desk warm, and the tests over each carrier. Plivo
// takes no markup in a REST update: the caller's call is pointed at a URL of ours that serves the
// conference, which Plivo then fetches, signed.
import { describe, expect, it, vi } from 'vitest';
import { signedWebhook } from '../fakes/carriers/voice-webhook.ts';
import { telnyxSigningKey } from '../fakes/carriers/signing.ts';
import { BUSINESS_NUMBER, usePhoneRig } from '../support/phone-rig.ts';
import { FRONT_DESK, PHONE_MENU_YAML } from '../support/phone-menu-flow.ts';

export type WarmCarrier = 'twilio' | 'telnyx' | 'plivo';

export const WARM_MENU_YAML = PHONE_MENU_YAML.replace(`mode: cold, on_failed: menu`, 'mode: warm, summary: true, on_failed: menu');

type TimelineEvent = { type: string; event: Record<string, unknown> };

/** The person answers, does not answer, is not rung because the caller left, or cannot be called. */
export function describeWarmTransfer(carriers: readonly WarmCarrier[]): void {
    // Beside the file's other suites (each on a rig of its own), one call after another on this one.
    describe.concurrent.each(carriers)('a %s caller warm-transferred to the front desk', (carrier) => {
    const rig = usePhoneRig(carrier, { llm: 'none', transcripts: [], flowYaml: WARM_MENU_YAML });
    const detail = async (id: string) => (await rig().server.request('GET', `/v1/sessions/${id}`, { apiKey: rig().account.apiKey })).body;
    const events = async (id: string): Promise<TimelineEvent[]> => (await rig().server.request('GET', `/v1/sessions/${id}/events?limit=500`, { apiKey: rig().account.apiKey })).body.events;
    const transfers = async (id: string) => (await events(id)).filter((e) => e.type === 'transfer').map((e) => e.event);
    const balance = async () => (await rig().server.request('GET', '/v1/credits/balance', { apiKey: rig().account.apiKey })).body.balance_usd_cents as number;
    const liveSession = () => rig().liveSession().then((s) => s.id);
    const inState = (id: string, state: string) => vi.waitFor(async () => expect((await detail(id)).path.at(-1)?.state).toBe(state), { timeout: 15_000, interval: 100 });
    const agentLines = async (id: string) => (await events(id)).filter((e) => e.type === 'transcript' && e.event.role === 'agent').map((e) => e.event.text as string);
    /** What the agent said once the transfer had failed. */
    const linesAfterTheFailure = async (id: string) => {
      const timeline = await events(id);
      const failedAt = timeline.findIndex((e) => e.type === 'transfer' && e.event.status === 'failed');
      return timeline.slice(failedAt + 1).filter((e) => e.type === 'transcript' && e.event.role === 'agent').map((e) => e.event.text as string);
    };
    const MENU_LINE = 'Press 1 for your account, or 0 for the front desk.';
    /** The carrier has been asked to call the front desk: the person's leg, ringing. */
    const personLeg = (placedBefore: number) =>
      vi.waitFor(
        () => {
          const legs = [...rig().api.calls.values()].filter((call) => call.to === FRONT_DESK && call.answerUrl);
          expect(legs.length).toBe(placedBefore + 1);
          return legs.at(-1)!;
        },
        { timeout: 20_000, interval: 100 },
      );
    const legsPlaced = () => [...rig().api.calls.values()].filter((call) => call.to === FRONT_DESK && call.answerUrl).length;
    /** What the carrier says to the person in its own voice: TwiML and TeXML's <Say>, Plivo's <Speak>. */
    const sayTag = carrier === 'plivo' ? 'Speak' : 'Say';
    /** The markup the caller's call was moved to: given inline (Twilio, Telnyx), or fetched from our URL (Plivo). */
    const callerMovedTo = async (callId: string) => {
      const call = rig().api.calls.get(callId)!;
      if (carrier !== 'plivo') return call.redirectedTo;
      await vi.waitFor(() => expect(call.transferFetched?.status).toBe(200), { timeout: 10_000, interval: 50 });
      return call.transferFetched!.body;
    };

    it.sequential('calls the person, tells them what the call is about, and joins them with the caller in one conference', { timeout: 90_000 }, async () => {
      const callId = { twilio: 'CA44444444444444444444444444444444', telnyx: 'v3:warm-answered', plivo: '4b4e28ba-2fa1-11d2-883f-0016d3cca427' }[carrier];
      const before = await balance();
      const placed = legsPlaced();
      const stream = await rig().call(callId);
      const id = await liveSession();
      await inState(id, 'menu');
      stream.pressDigit('1');
      await inState(id, 'account');
      for (const digit of ['0', '4', '2', '7', '#']) stream.pressDigit(digit);
      await inState(id, 'thanks');
      stream.pressDigit('0');

      const leg = await personLeg(placed);
      // From the business's number, so the person sees who is calling.
      expect(leg.from).toBe(BUSINESS_NUMBER);
      await vi.waitFor(async () => expect(await agentLines(id)).toEqual(expect.arrayContaining(['Connecting you.', 'Please hold while I connect you.'])), { timeout: 15_000, interval: 100 });
      expect((await detail(id)).status).toBe('connected');

      // A forged answer (signed with a key that is not the account's) changes nothing.
      const forger = carrier === 'telnyx' ? ({ carrier, key: telnyxSigningKey() } as const) : ({ carrier, authToken: 'not-the-token' } as const);
      const fields: Record<string, string> =
        carrier === 'plivo'
          ? { CallUUID: leg.callId, RequestUUID: leg.requestUuid!, CallStatus: 'in-progress', Direction: 'outbound', From: leg.from, To: leg.to }
          : { CallSid: leg.callId, CallStatus: 'in-progress', Direction: 'outbound-api', From: leg.from, To: leg.to };
      const forged = signedWebhook(forger, leg.answerUrl!, fields);
      expect((await fetch(leg.answerUrl!, { method: 'POST', headers: forged.headers, body: forged.body })).status).toBe(403);
      expect(rig().api.calls.get(callId)!.redirectedTo).toBeUndefined();

      await rig().api.sendStatus(leg.callId, rig().signer, 'ringing');
      const answered = await rig().api.answerPlacedCall(leg.callId, rig().signer);
      expect(answered.status).toBe(200);
      // The person hears what the call is about (the account number the caller typed), then joins the conference.
      const said = new RegExp(`<${sayTag}>([^<]*)</${sayTag}>`).exec(answered.body)?.[1] ?? '';
      expect(said).toMatch(/account number 0427/);
      expect(said.length).toBeLessThanOrEqual(600);
      const conference = /<Conference[^>]*>([^<]+)<\/Conference>/.exec(answered.body)?.[1];
      expect(conference).toBe(`voxflow-${id}`);
      expect(answered.body.indexOf(`<${sayTag}>`)).toBeLessThan(answered.body.indexOf('<Conference'));
      // The caller's call was moved into the same conference (and not hung up), where it waits for the person.
      const callerMarkup = await callerMovedTo(callId);
      expect(callerMarkup).toContain(`>${conference}</Conference>`);
      expect(callerMarkup).toContain('startConferenceOnEnter="false"');
      expect(callerMarkup).not.toContain(`<${sayTag}>`);
      expect(rig().api.calls.get(callId)!.status).toBe('in-progress');

      const ended = await vi.waitFor(
        async () => {
          const body = await detail(id);
          expect(body).toMatchObject({ status: 'ended', end_reason: 'transferred', transferred_to: FRONT_DESK });
          return body;
        },
        { timeout: 20_000, interval: 100 },
      );
      expect((await transfers(id)).map((e) => [e.status, e.mode, e.to])).toEqual([
        ['started', 'warm', FRONT_DESK],
        ['completed', 'warm', FRONT_DESK],
      ]);
      // Billed once: what the session says it charged is what left the balance.
      expect(before - (await balance())).toBe(ended.credits_charged_usd_cents);

      // The same answer again (a replay, or the carrier retrying) only hears that the caller is gone.
      const asked = rig().api.requests.length;
      const again = await rig().api.answerPlacedCall(leg.callId, rig().signer);
      expect(again.body).toMatch(/no longer on the line/);
      expect(again.body).not.toContain('<Conference');
      expect(rig().api.requests.length).toBe(asked);
      expect((await detail(id)).end_reason).toBe('transferred');
    });

    it.sequential('takes the caller back to the menu when the person does not answer', { timeout: 90_000 }, async () => {
      const callId = { twilio: 'CA55555555555555555555555555555555', telnyx: 'v3:warm-no-answer', plivo: '5b4e28ba-2fa1-11d2-883f-0016d3cca427' }[carrier];
      const placed = legsPlaced();
      const stream = await rig().call(callId);
      const id = await liveSession();
      await inState(id, 'menu');
      stream.pressDigit('0');
      const leg = await personLeg(placed);
      await rig().api.sendStatus(leg.callId, rig().signer, 'no-answer');

      await vi.waitFor(async () => expect((await transfers(id)).map((e) => e.status)).toEqual(['started', 'failed']), { timeout: 20_000, interval: 100 });
      const failed = (await transfers(id)).find((e) => e.status === 'failed')!;
      expect(failed).toMatchObject({ mode: 'warm', to: FRONT_DESK });
      expect(failed.reason).toMatch(/did not answer/);
      // Still on the line: the agent says the menu again, and the keys work again.
      await inState(id, 'menu');
      await vi.waitFor(async () => expect(await linesAfterTheFailure(id)).toEqual([MENU_LINE]), { timeout: 15_000, interval: 100 });
      expect(rig().api.calls.get(callId)!.redirectedTo).toBeUndefined();
      stream.pressDigit('1');
      await inState(id, 'account');
      expect((await detail(id)).status).toBe('connected');

      await stream.hangUp();
      await vi.waitFor(async () => expect(await detail(id)).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up', transferred_to: null }), { timeout: 10_000 });
    });

    it.sequential('stops the person\'s phone ringing when the caller hangs up first', { timeout: 90_000 }, async () => {
      const callId = { twilio: 'CA88888888888888888888888888888888', telnyx: 'v3:warm-caller-left', plivo: '8b4e28ba-2fa1-11d2-883f-0016d3cca427' }[carrier];
      const placed = legsPlaced();
      const stream = await rig().call(callId);
      const id = await liveSession();
      await inState(id, 'menu');
      stream.pressDigit('0');
      const leg = await personLeg(placed);
      await vi.waitFor(() => expect(leg.status).not.toBe('completed'), { timeout: 5_000 });
      await stream.hangUp();
      await vi.waitFor(async () => expect(await detail(id)).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up', transferred_to: null }), { timeout: 15_000, interval: 100 });
      // The person's leg was hung up through the carrier's API while it still rang (Plivo: the call
      // request cancelled by its request_uuid); the caller's call was left alone.
      await vi.waitFor(() => expect(leg.status).toBe('completed'), { timeout: 15_000, interval: 100 });
      expect(rig().api.calls.get(callId)!.redirectedTo).toBeUndefined();
      // The person picking up now only hears that the caller is gone.
      leg.status = 'in-progress';
      expect((await rig().api.answerPlacedCall(leg.callId, rig().signer)).body).toMatch(/no longer on the line/);
    });

    it.sequential('takes the caller back to the menu, saying why, when the carrier cannot call the person', { timeout: 90_000 }, async () => {
      const callId = { twilio: 'CA66666666666666666666666666666666', telnyx: 'v3:warm-refused', plivo: '6b4e28ba-2fa1-11d2-883f-0016d3cca427' }[carrier];
      const placed = legsPlaced();
      const stream = await rig().call(callId);
      const id = await liveSession();
      await inState(id, 'menu');
      rig().api.setFault({ status: 400, times: 1 });
      try {
        stream.pressDigit('0');
        await vi.waitFor(async () => expect((await transfers(id)).map((e) => e.status)).toEqual(['started', 'failed']), { timeout: 20_000, interval: 100 });
      } finally {
        rig().api.setFault(undefined);
      }
      expect(legsPlaced()).toBe(placed);
      const failed = (await transfers(id)).find((e) => e.status === 'failed')!;
      expect(failed.reason).toMatch(new RegExp(`${carrier} did not call \\${FRONT_DESK}.*400`));
      await inState(id, 'menu');
      await vi.waitFor(async () => expect(await linesAfterTheFailure(id)).toEqual([MENU_LINE]), { timeout: 15_000, interval: 100 });

      await stream.hangUp();
      await vi.waitFor(async () => expect(await detail(id)).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up', transferred_to: null }), { timeout: 10_000 });
    });
  });
}

/** A ring timeout the flow sets (timeout_seconds): a timer of the server's own. */
export function describeNobodyPicksUp(carriers: readonly WarmCarrier[]): void {
    describe.concurrent.each(carriers)('a %s warm transfer nobody picks up', (carrier) => {
    const rig = usePhoneRig(carrier, { llm: 'none', transcripts: [], flowYaml: PHONE_MENU_YAML.replace('mode: cold, on_failed: menu', 'mode: warm, timeout_seconds: 5, on_failed: menu') });

    it.sequential('stops the ringing after the flow\'s timeout_seconds and takes the caller back to the menu', { timeout: 90_000 }, async () => {
      const { server, account, api } = rig();
      const detail = async (id: string) => (await server.request('GET', `/v1/sessions/${id}`, { apiKey: account.apiKey })).body;
      const stream = await rig().call(carrier === 'plivo' ? '9b4e28ba-2fa1-11d2-883f-0016d3cca427' : 'v3:warm-rings-out');
      const id = await rig().liveSession().then((s) => s.id);
      await vi.waitFor(async () => expect((await detail(id)).path.at(-1)?.state).toBe('menu'), { timeout: 15_000, interval: 100 });
      stream.pressDigit('0');
      const leg = await vi.waitFor(() => api.placedCallTo(FRONT_DESK) ?? expect.fail('the front desk was not called yet'), { timeout: 20_000, interval: 100 });
      await api.sendStatus(leg.callId, rig().signer, 'ringing');
      // Nobody answers: after 5 s the leg is hung up, and the caller is back at the menu.
      const failed = await vi.waitFor(
        async () => {
          const events = (await server.request('GET', `/v1/sessions/${id}/events?limit=500`, { apiKey: account.apiKey })).body.events as TimelineEvent[];
          const found = events.find((e) => e.type === 'transfer' && e.event.status === 'failed');
          expect(found).toBeDefined();
          return found!.event;
        },
        { timeout: 30_000, interval: 200 },
      );
      expect(failed.reason).toBe(`${FRONT_DESK} did not answer within 5 s`);
      await vi.waitFor(() => expect(leg.status).toBe('completed'), { timeout: 15_000, interval: 100 });
      await vi.waitFor(async () => expect((await detail(id)).path.at(-1)?.state).toBe('menu'), { timeout: 15_000, interval: 100 });
      expect((await detail(id)).status).toBe('connected');
      await stream.hangUp();
      await vi.waitFor(async () => expect(await detail(id)).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up' }), { timeout: 10_000 });
    });
  });
}
