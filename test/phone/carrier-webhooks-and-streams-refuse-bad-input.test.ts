// What a phone line does with requests it must not trust: a webhook with a wrong or missing
// signature, a call to a number nobody holds, an account without credit, and media streams that
// come without their call's token, twice, or for another call; on Plivo, requests for a transfer's
// markup that are unsigned, for another call, or with a ticket the server never sealed. None of
// them makes a session that runs or charges anything, and the server keeps taking good calls.
import { WebSocket } from 'ws';
import { describe, expect, it, vi } from 'vitest';
import { FakeCarrierStream, streamTargetFromMarkup } from '../fakes/carriers/media-stream-client.ts';
import { inboundCallParams, sendVoiceWebhook } from '../fakes/carriers/voice-webhook.ts';
import { BUSINESS_NUMBER, CALLER_NUMBER, carriersToTest, usePhoneRig } from '../support/phone-rig.ts';
import { GUESSING_GAME_RULES } from '../support/voice-server.ts';

const callIdOf = (n: number) => `CA${String(n).padStart(32, '0')}`;

describe('a Twilio line refuses what it must not trust', () => {
  const rig = usePhoneRig('twilio', { rules: GUESSING_GAME_RULES, transcripts: [] });

  const sessionsOfCarrier = async () => {
    const list = await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey });
    return (list.body as Array<{ transport: string; status: string; end_reason: string | null; credits_charged_usd_cents: number }>).filter((s) => s.transport === 'twilio');
  };

  it('answers 403 to a webhook signed with the wrong token, or not signed, and makes no session', async () => {
    const before = (await sessionsOfCarrier()).length;
    const forged = await rig().ring(callIdOf(1), { signer: { carrier: 'twilio', authToken: 'not-the-accounts-token' } });
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.body).error.code).toBe('carrier_signature_invalid');
    const unsigned = await fetch(`${rig().server.url}/telephony/twilio/voice`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(inboundCallParams('twilio', { callId: callIdOf(2), from: CALLER_NUMBER, to: BUSINESS_NUMBER })).toString(),
    });
    expect(unsigned.status).toBe(403);
    expect((await sessionsOfCarrier()).length).toBe(before);
  });

  it('tells a caller of a number nobody holds that it is not in service, with no session', async () => {
    const before = (await sessionsOfCarrier()).length;
    const answered = await rig().ring(callIdOf(3), { to: '+15559990000' });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatch(/not in service/i);
    expect(answered.body).toMatch(/<Hangup\s*\/>/);
    expect(answered.body).not.toMatch(/<Stream/);
    expect((await sessionsOfCarrier()).length).toBe(before);
  });

  it('closes a stream with no token, an unknown one, or one used before, with 1008, charging nothing', async () => {
    const base = rig().server.url.replace(/^http/, 'ws');
    const closeCode = (url: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(url);
        socket.once('close', (code) => resolve(code));
        socket.once('error', () => undefined);
        socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        setTimeout(() => reject(new Error('no close')), 10_000);
      });
    expect(await closeCode(`${base}/telephony/twilio/stream/Zm9yZ2VkdG9rZW5mb3JnZWR0b2tlbg`)).toBe(1008);
    expect([404, 1008]).toContain(await closeCode(`${base}/telephony/twilio/stream/`));

    // A real call's stream, then the same URL again (a replay): the second is refused.
    const answered = await rig().ring(callIdOf(4));
    const target = streamTargetFromMarkup('twilio', answered.body);
    const first = await FakeCarrierStream.connect({ carrier: 'twilio', target, callId: callIdOf(4) });
    await vi.waitFor(async () => expect((await sessionsOfCarrier()).some((s) => s.status === 'connected')).toBe(true), { timeout: 10_000 });
    expect(await closeCode(target.url)).toBe(1008);
    await first.hangUp();
  });

  it('closes a stream whose start names another call, and ends that session charging nothing', async () => {
    const answered = await rig().ring(callIdOf(5));
    const stream = await FakeCarrierStream.connect({ carrier: 'twilio', target: streamTargetFromMarkup('twilio', answered.body), callId: callIdOf(6) });
    await stream.waitForClose();
    expect(stream.closed?.code).toBe(1008);
    await vi.waitFor(async () => {
      const refused = (await sessionsOfCarrier()).find((s) => s.end_reason === 'refused');
      expect(refused).toBeDefined();
      expect(refused!.credits_charged_usd_cents).toBe(0);
    });
  });

  it('ignores malformed and oversized media frames, and the call goes on', { timeout: 60_000 }, async () => {
    const stream = await rig().call(callIdOf(7));
    stream.sendRaw('{not json');
    // 30 KB of audio in one frame (almost 4 s; carriers send 20 ms): more than a frame may carry.
    stream.sendRaw(JSON.stringify({ event: 'media', streamSid: stream.streamId, media: { payload: Buffer.alloc(30_000, 0x7f).toString('base64') } }));
    stream.sendRaw(JSON.stringify({ event: 'media', streamSid: stream.streamId, media: { payload: 42 } }));
    stream.sendRaw(JSON.stringify({ event: 'no-such-event' }));
    // The greeting still reaches the caller: the call went on.
    await vi.waitFor(() => expect(stream.receivedAudio().length).toBeGreaterThan(4000), { timeout: 30_000, interval: 100 });
    expect(stream.closed).toBeNull();
    await stream.hangUp();
  });

  it('says one sentence and hangs up on a caller of an account without credit, charging nothing', async () => {
    const { server, account } = rig();
    const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
    const balance = (await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey })).body.balance_usd_cents as number;
    await server.app.services.store.credits.debit(accountId, balance, { idempotencyKey: `drain:${accountId}` });
    const before = (await sessionsOfCarrier()).length;
    const answered = await sendVoiceWebhook(rig().signer, `${server.url}/telephony/twilio/voice`, inboundCallParams('twilio', { callId: callIdOf(8), from: CALLER_NUMBER, to: BUSINESS_NUMBER }));
    expect(answered.status).toBe(200);
    expect(answered.body).toMatch(/<Say[^>]*>[^<]+<\/Say>\s*<Hangup\s*\/>/);
    expect(answered.body).not.toMatch(/<Stream/);
    expect((await sessionsOfCarrier()).length).toBe(before);
    const after = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    expect(after.body.balance_usd_cents).toBe(0);
  });
});

// Plivo's own signatures and transfer tickets, nothing the store keeps: on the embedded store only.
describe.each(carriersToTest(['plivo'] as const, null))('a %s line refuses what it must not trust', (carrier) => {
  const rig = usePhoneRig(carrier, { rules: GUESSING_GAME_RULES, transcripts: [] });
  const plivoCallId = (n: number) => `${String(n).padStart(8, '0')}-2fa1-11d2-883f-0016d3cca427`;
  const sessionsOfCarrier = async () => {
    const list = await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey });
    return (list.body as Array<{ id: string; transport: string; status: string }>).filter((s) => s.transport === 'plivo');
  };

  it('answers 403 to a webhook whose V3 signature was made with another auth token, and makes no session', async () => {
    const before = (await sessionsOfCarrier()).length;
    const forged = await rig().ring(plivoCallId(1), { signer: { carrier: 'plivo', authToken: 'not-the-accounts-token' } });
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.body).error.code).toBe('carrier_signature_invalid');
    expect((await sessionsOfCarrier()).length).toBe(before);
  });

  it('serves a transfer\'s markup only to a signed request, for the call it was made for, with a ticket it sealed', async () => {
    const stream = await rig().call(plivoCallId(2));
    const session = await vi.waitFor(
      async () => {
        const found = (await sessionsOfCarrier()).find((s) => s.status === 'connected');
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 15_000, interval: 100 },
    );
    const base = `${rig().server.url}/telephony/plivo/transfer?session=${session.id}`;
    const fields = { CallUUID: plivoCallId(2), CallStatus: 'in-progress', Direction: 'inbound', From: CALLER_NUMBER, To: BUSINESS_NUMBER };
    // A ticket nobody sealed (guessed, or altered) finds nothing, even signed.
    const guessed = await sendVoiceWebhook(rig().signer, `${base}&t=${Buffer.from('v1:AAAA:BBBB:CCCC').toString('base64url')}`, fields);
    expect(guessed.status).toBe(404);
    expect(guessed.body).not.toMatch(/<Dial/);
    // Unsigned, or signed with another token: refused before anything is read.
    const unsigned = await fetch(`${base}&t=x`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    expect(unsigned.status).toBe(403);
    const forged = await sendVoiceWebhook({ carrier: 'plivo', authToken: 'guessed' }, `${base}&t=x`, fields);
    expect(forged.status).toBe(403);
    // Another call's request for this session's transfer finds nothing either.
    const otherCall = await sendVoiceWebhook(rig().signer, `${base}&t=x`, { ...fields, CallUUID: plivoCallId(3) });
    expect(otherCall.status).toBe(404);
    await stream.hangUp();
  });
});
