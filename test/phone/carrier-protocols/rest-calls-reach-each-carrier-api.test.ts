import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import type { CarrierCalls, CarrierName, CredentialsByCarrier } from '../../../server/transports/carriers/carrier.ts';
import { CARRIERS } from '../../../server/transports/carriers/index.ts';
import { ProviderError } from '../../../server/providers/types.ts';
import { startFakeCarrierApi, type FakeCarrierApi, type FakeCarrierAuth } from '../../fakes/carriers/rest-server.ts';
import { telnyxSigningKey } from '../../fakes/carriers/signing.ts';
import type { WebhookSigner } from '../../fakes/carriers/voice-webhook.ts';

const telnyxKey = telnyxSigningKey();
const SETUP: { [Name in CarrierName]: { auth: FakeCarrierAuth; credentials: CredentialsByCarrier[Name]; authorization: string } } = {
  twilio: {
    auth: { carrier: 'twilio', accountSid: 'AC0123', authToken: 'twilio-secret' },
    credentials: { accountSid: 'AC0123', authToken: 'twilio-secret' },
    authorization: `Basic ${Buffer.from('AC0123:twilio-secret').toString('base64')}`,
  },
  telnyx: {
    auth: { carrier: 'telnyx', apiKey: 'KEYtelnyx-secret', accountSid: 'acct-1' },
    credentials: { apiKey: 'KEYtelnyx-secret', publicKey: telnyxKey.publicKeyBase64, accountSid: 'acct-1', applicationSid: 'app-1' },
    authorization: 'Bearer KEYtelnyx-secret',
  },
  plivo: {
    auth: { carrier: 'plivo', authId: 'MA0123', authToken: 'plivo-secret' },
    credentials: { authId: 'MA0123', authToken: 'plivo-secret' },
    authorization: `Basic ${Buffer.from('MA0123:plivo-secret').toString('base64')}`,
  },
};

const SIGNERS: Record<CarrierName, WebhookSigner> = {
  twilio: { carrier: 'twilio', authToken: 'twilio-secret' },
  telnyx: { carrier: 'telnyx', key: telnyxKey },
  plivo: { carrier: 'plivo', authToken: 'plivo-secret' },
};

let api: FakeCarrierApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const fast = (extra: Partial<{ timeoutMs: number; retries: number; backoffMs: number }> = {}) => ({ signal: AbortSignal.timeout(10_000), timeoutMs: 2_000, backoffMs: 20, ...extra });

describe.each(['twilio', 'telnyx', 'plivo'] as const)('%s REST calls', (name) => {
  const setup = SETUP[name];
  const callsFor = (credentials = setup.credentials) => (CARRIERS[name].calls as (c: typeof credentials) => CarrierCalls)(credentials);

  test('placing a call sends the numbers, our answer and status URLs and machine detection, with the account\'s auth', async () => {
    api = await startFakeCarrierApi(setup.auth);
    const placed = await callsFor().placeCall({ from: '+15550100001', to: '+15550100002', answerUrl: 'https://voice.example.com/telephony/voice', statusUrl: 'https://voice.example.com/telephony/status', machineDetection: true }, { ...fast(), baseUrl: api.baseUrl });
    const call = api.calls.get(placed.callId)!;
    expect(call).toMatchObject({ from: '+15550100001', to: '+15550100002', answerUrl: 'https://voice.example.com/telephony/voice', machineDetection: true });
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.headers.authorization).toBe(setup.authorization);
  });

  test('hanging up ends the live call; hanging up a call already over is not an error', async () => {
    api = await startFakeCarrierApi(setup.auth);
    api.addLiveCall('call-live');
    await callsFor().hangUp('call-live', { ...fast(), baseUrl: api.baseUrl });
    expect(api.calls.get('call-live')!.status).toBe('completed');
    await expect(callsFor().hangUp('call-live', { ...fast(), baseUrl: api.baseUrl })).resolves.toBeUndefined();
  });

  test('a cold transfer points the live call at a dial of the target', async () => {
    api = await startFakeCarrierApi(setup.auth);
    api.addLiveCall('call-live');
    await callsFor().transfer('call-live', { to: '+15551234567', callerId: '+15550100002', markupUrl: 'https://voice.example.com/telephony/transfer/abc' }, { ...fast(), baseUrl: api.baseUrl });
    const redirected = api.calls.get('call-live')!.redirectedTo!;
    if (name === 'plivo') expect(redirected).toBe('https://voice.example.com/telephony/transfer/abc');
    else expect(redirected).toMatch(/<Dial callerId="\+15550100002"><Number>\+15551234567<\/Number><\/Dial>/);
  });

  test('a 5xx is retried with a growing pause, and the call goes through', async () => {
    api = await startFakeCarrierApi(setup.auth);
    api.addLiveCall('call-live');
    api.setFault({ status: 503, times: 2 });
    const started = performance.now();
    await callsFor().hangUp('call-live', { ...fast({ retries: 2, backoffMs: 60 }), baseUrl: api.baseUrl });
    // Backoff of 60 ms, then 120 ms, before the third attempt.
    expect(performance.now() - started).toBeGreaterThanOrEqual(170);
    expect(api.requests).toHaveLength(3);
    expect(api.calls.get('call-live')!.status).toBe('completed');
  });

  test('a carrier that hangs is timed out and asked again', async () => {
    api = await startFakeCarrierApi(setup.auth);
    api.addLiveCall('call-live');
    api.setFault({ hangMs: Infinity, times: 1 });
    await callsFor().hangUp('call-live', { ...fast({ timeoutMs: 200, retries: 1 }), baseUrl: api.baseUrl });
    expect(api.requests.map((request) => request.state)).toEqual(['aborted', 'finished']);
  });

  test('a refused key (4xx) is not retried and says so, without the secret in the message', async () => {
    api = await startFakeCarrierApi(setup.auth);
    api.addLiveCall('call-live');
    const wrong = { ...setup.credentials, authToken: 'not-the-secret', apiKey: 'KEYnot-the-secret' } as typeof setup.credentials;
    const failure = await callsFor(wrong).hangUp('call-live', { ...fast(), baseUrl: api.baseUrl }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({ provider: name, kind: 'auth', retryable: false });
    expect(String((failure as Error).message)).not.toMatch(/secret/);
    expect(api.requests).toHaveLength(1);
  });

  test('retries stop after the allowed number, with a retryable error', async () => {
    api = await startFakeCarrierApi(setup.auth);
    api.addLiveCall('call-live');
    api.setFault({ status: 500 });
    const failure = await callsFor().hangUp('call-live', { ...fast({ retries: 2, backoffMs: 5 }), baseUrl: api.baseUrl }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ kind: 'server', retryable: true });
    expect(api.requests).toHaveLength(3);
  });
});

test('Telnyx and Plivo send keypad tones to the live call; Twilio offers no way during a stream', async () => {
  for (const name of ['telnyx', 'plivo'] as const) {
    api = await startFakeCarrierApi(SETUP[name].auth);
    api.addLiveCall('call-live');
    const calls = (CARRIERS[name].calls as (c: unknown) => CarrierCalls)(SETUP[name].credentials);
    await calls.sendDigits!('call-live', '12w#', { ...fast(), baseUrl: api.baseUrl });
    expect(api.calls.get('call-live')!.digitsSent).toEqual(['12w#']);
    await expect(calls.sendDigits!('call-live', '1; DROP', { ...fast(), baseUrl: api.baseUrl })).rejects.toThrow(RangeError);
    await api.close();
    api = undefined;
  }
  expect(CARRIERS.twilio.calls(SETUP.twilio.credentials).sendDigits).toBeUndefined();
});

test("an abort from the caller stops the retries at once and surfaces as the abort", async () => {
  api = await startFakeCarrierApi(SETUP.twilio.auth);
  api.addLiveCall('call-live');
  api.setFault({ status: 503 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('session ended')), 100);
  const failure = await CARRIERS.twilio.calls(SETUP.twilio.credentials).hangUp('call-live', { signal: controller.signal, timeoutMs: 1_000, retries: 5, backoffMs: 1_000, baseUrl: api.baseUrl }).catch((error: unknown) => error);
  expect(failure).toMatchObject({ message: 'session ended' });
  expect(api.requests.length).toBeLessThanOrEqual(2);
});

describe.each(['twilio', 'telnyx', 'plivo'] as const)('%s: a placed call reports back', (name) => {
  test('the carrier fetches our answer URL, then posts progress and the answering machine\'s beep, each signed', async () => {
    const received: { path: string; verified: boolean; parsed: unknown }[] = [];
    const carrier = CARRIERS[name];
    let base = '';
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => {
        const rawBody = Buffer.concat(parts).toString('utf8');
        const params = Object.fromEntries(new URLSearchParams(rawBody));
        const verdict = (carrier.verifyVoiceWebhook as (r: unknown, c: unknown) => { ok: boolean })({ url: `${base}${req.url}`, headers: req.headers, rawBody, params }, SETUP[name].credentials);
        received.push({ path: req.url!, verified: verdict.ok, parsed: carrier.parseVoiceWebhook(params) });
        const markup = carrier.answerWithStream('wss://voice.example.com/stream', { token: 'abc123' });
        res.writeHead(200, { 'content-type': markup.contentType }).end(markup.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      api = await startFakeCarrierApi(SETUP[name].auth);
      const calls = (carrier.calls as (c: unknown) => CarrierCalls)(SETUP[name].credentials);
      const { callId } = await calls.placeCall({ from: '+15550100001', to: '+15550100002', answerUrl: `${base}/voice`, statusUrl: `${base}/status`, machineDetection: true }, { ...fast(), baseUrl: api.baseUrl });
      const signer = SIGNERS[name];
      await api.sendStatus(callId, signer, 'ringing');
      const answer = await api.answerPlacedCall(callId, signer);
      expect(answer.body).toContain('wss://voice.example.com/stream');
      await api.sendStatus(callId, signer, { answeredBy: 'machine_end_beep' });
      await api.sendStatus(callId, signer, 'completed');
      expect(received.map((r) => r.path)).toEqual(['/status', '/voice', '/status', '/status']);
      expect(received.every((r) => r.verified)).toBe(true);
      const statuses = received.map((r) => (r.parsed as { call: { status: string; answeredBy?: string; direction: string } }).call);
      expect(statuses.map((s) => s.status)).toEqual(['ringing', 'answered', 'answered', 'completed']);
      // Plivo's asynchronous verdict says a machine, never that its greeting is over.
      expect(statuses[2]!.answeredBy).toBe(name === 'plivo' ? 'machine' : 'machine_end');
      expect(statuses.every((s) => s.direction === 'outbound')).toBe(true);
      if (name === 'plivo') expect((received[0]!.parsed as { call: { placementId: string } }).call.placementId).toBe(callId);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
