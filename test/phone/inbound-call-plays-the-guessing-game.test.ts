// A caller rings a business's number at each carrier and plays the guessing game by voice, over
// the carrier's own webhook and media-stream protocol: the agent greets first and is heard on
// the phone line (8 kHz G.711), the caller's speech moves the flow, and the hang-up ends the
// session, billed once, with the call's numbers and status on the session.
import { describe, expect, it, vi } from 'vitest';
import { dbfs } from '../../server/audio/pcm.ts';
import { synthesizeSpeech, padWithSilence } from '../support/speech.ts';
import { GUESSING_GAME_RULES } from '../support/voice-server.ts';
import { BUSINESS_NUMBER, CALLER_NUMBER, carriersToTest, usePhoneRig } from '../support/phone-rig.ts';

// The carriers' calls run at once, each on a rig of its own (its own server, account and carrier):
// they are mostly real-time waits, and nothing of one is seen by another.
describe.concurrent.each(carriersToTest(['twilio', 'telnyx', 'plivo'] as const, 'twilio'))('a %s call to a bound number', (carrier) => {
  const rig = usePhoneRig(carrier, { rules: GUESSING_GAME_RULES, transcripts: ["I'm ready", 'Is it an animal?'] });

  it('greets the caller on the line, moves on the caller\'s words, and ends billed once when the caller hangs up', { timeout: 90_000 }, async () => {
    const { server, account } = rig();
    const callId = { twilio: 'CA11111111111111111111111111111111', telnyx: 'v3:call-one', plivo: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' }[carrier];
    const stream = await rig().call(callId);

    const session = await rig().liveSession();
    // The list masks the numbers; the detail has them whole.
    expect(session.from).not.toBe(CALLER_NUMBER);
    expect(session.from.endsWith(CALLER_NUMBER.slice(-4))).toBe(true);

    // The greeting reaches the caller as speech on the phone line.
    await vi.waitFor(() => expect(stream.receivedAudio().length).toBeGreaterThan(8000 * 0.5), { timeout: 30_000, interval: 100 });
    expect(dbfs(stream.receivedAudio())).toBeGreaterThan(-40);
    await vi.waitFor(() => expect(stream.receivedMarks.length).toBeGreaterThan(0), { timeout: 30_000, interval: 100 });

    const speech = padWithSilence(await synthesizeSpeech("I'm ready"), 200, 1200);
    await stream.sendAudio(speech, 16000);
    await vi.waitFor(
      async () => {
        const detail = await server.request('GET', `/v1/sessions/${session.id}`, { apiKey: account.apiKey });
        expect(detail.body.path.map((p: { state: string }) => p.state)).toContain('playing');
      },
      { timeout: 20_000, interval: 200 },
    );

    await stream.hangUp();
    const ended = await vi.waitFor(
      async () => {
        const detail = await server.request('GET', `/v1/sessions/${session.id}`, { apiKey: account.apiKey });
        expect(detail.body.status).toBe('ended');
        return detail.body;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(ended).toMatchObject({ transport: carrier, direction: 'inbound', from: CALLER_NUMBER, to: BUSINESS_NUMBER, carrier_call_id: callId, end_reason: 'caller_hung_up' });
    expect(ended.transcript.filter((t: { role: string }) => t.role === 'user').map((t: { text: string }) => t.text)).toEqual(["I'm ready"]);
    // The first minute was charged, once, at the account's rate (flite's voice is free: 2 of the 3
    // cents); the caller hung up first, so nothing was sent to the carrier to hang up.
    const balance = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    const rate = balance.body.effective_rate_per_minute_usd_cents as number;
    expect(rate).toBeGreaterThan(0);
    expect(ended.credits_charged_usd_cents).toBe(rate);
    expect(balance.body.balance_usd_cents).toBe(200 - rate);
    expect(rig().api.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    // The number shows its last call.
    const numbers = await server.request('GET', '/v1/phone-numbers', { apiKey: account.apiKey });
    expect(numbers.body[0]).toMatchObject({ number: BUSINESS_NUMBER, last_call_status: 'answered' });
    expect(stream.protocolErrors).toEqual([]);
  });
});
