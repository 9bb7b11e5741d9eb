import { expect, test } from 'vitest';
import type { WebhookRequest } from '../../../server/transports/carriers/carrier.ts';
import { CARRIERS } from '../../../server/transports/carriers/index.ts';
import { twilioSignature } from '../../../server/transports/carriers/twilio/webhook.ts';
import { signedWebhook, inboundCallParams, type WebhookSigner } from '../../fakes/carriers/voice-webhook.ts';
import { telnyxSigningKey } from '../../fakes/carriers/signing.ts';

const URL_AS_CONFIGURED = 'https://voice.example.com/telephony/twilio/voice?node=a';
const params = { CallSid: 'CA1234', From: '+15550100001', To: '+15550100002', CallStatus: 'ringing', Direction: 'inbound' };

function request(headers: Record<string, string>, body: string, url = URL_AS_CONFIGURED, fields: Record<string, string> = params): WebhookRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { url, headers: lower, rawBody: body, params: fields };
}

test("Twilio's own documented example signature is accepted", () => {
  // https://www.twilio.com/docs/usage/security: this URL, these fields and auth token 12345.
  const documented = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
  expect(twilioSignature('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', documented)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  const verdict = CARRIERS.twilio.verifyVoiceWebhook(request({ 'X-Twilio-Signature': '0/KCTR6DLpKmkAf8muzZqo1nDgQ=' }, '', 'https://mycompany.com/myapp.php?foo=1&bar=2', documented), { accountSid: 'AC1', authToken: '12345' });
  expect(verdict).toEqual({ ok: true });
});

const twilioCredentials = { accountSid: 'AC1', authToken: 'twilio-auth-token' };
const plivoCredentials = { authId: 'MA1', authToken: 'plivo-auth-token' };
const telnyxKey = telnyxSigningKey();
const telnyxCredentials = { apiKey: 'KEY', publicKey: telnyxKey.publicKeyBase64 };

const cases = [
  { name: 'twilio', signer: { carrier: 'twilio', authToken: twilioCredentials.authToken }, credentials: twilioCredentials, wrong: { ...twilioCredentials, authToken: 'another-token' } },
  { name: 'telnyx', signer: { carrier: 'telnyx', key: telnyxKey }, credentials: telnyxCredentials, wrong: { ...telnyxCredentials, publicKey: telnyxSigningKey().publicKeyBase64 } },
  { name: 'plivo', signer: { carrier: 'plivo', authToken: plivoCredentials.authToken }, credentials: plivoCredentials, wrong: { ...plivoCredentials, authToken: 'another-token' } },
] as const;

const verify = (name: (typeof cases)[number]['name'], req: WebhookRequest, credentials: unknown, now?: Date) =>
  (CARRIERS[name].verifyVoiceWebhook as (r: WebhookRequest, c: unknown, n?: Date) => { ok: boolean; reason?: string })(req, credentials, now);

test.each(cases)('$name: a webhook signed as the carrier signs it is accepted', ({ name, signer, credentials }) => {
  const fields = inboundCallParams(name, { callId: 'call-1', from: '+15550100001', to: '+15550100002' });
  const { headers, body } = signedWebhook(signer as WebhookSigner, URL_AS_CONFIGURED, fields);
  expect(verify(name, request(headers, body, URL_AS_CONFIGURED, fields), credentials)).toEqual({ ok: true });
});

test.each(cases)('$name: a tampered field, another account\'s key or a missing signature is refused', ({ name, signer, credentials, wrong }) => {
  const fields = inboundCallParams(name, { callId: 'call-1', from: '+15550100001', to: '+15550100002' });
  const { headers, body } = signedWebhook(signer as WebhookSigner, URL_AS_CONFIGURED, fields);
  const tamperedFields = { ...fields, From: '+15559999999' };
  const tamperedBody = body.replace(encodeURIComponent('+15550100001'), encodeURIComponent('+15559999999'));
  expect(tamperedBody).not.toBe(body);
  expect(verify(name, request(headers, tamperedBody, URL_AS_CONFIGURED, tamperedFields), credentials).ok).toBe(false);
  expect(verify(name, request(headers, body, URL_AS_CONFIGURED, fields), wrong).ok).toBe(false);
  expect(verify(name, request({}, body, URL_AS_CONFIGURED, fields), credentials)).toMatchObject({ ok: false, reason: expect.stringMatching(/^no /) });
});

test.each(cases.filter((c) => c.name !== 'telnyx'))('$name: a signature for another URL (another endpoint or query) is refused', ({ name, signer, credentials }) => {
  const fields = inboundCallParams(name, { callId: 'call-1', from: '+15550100001', to: '+15550100002' });
  const { headers, body } = signedWebhook(signer as WebhookSigner, 'https://voice.example.com/telephony/twilio/voice?node=b', fields);
  expect(verify(name, request(headers, body, URL_AS_CONFIGURED, fields), credentials).ok).toBe(false);
});

test('Twilio: a URL that reaches us with its default port written out still verifies', () => {
  const { headers, body } = signedWebhook({ carrier: 'twilio', authToken: twilioCredentials.authToken }, 'https://voice.example.com/telephony/twilio/voice', params);
  expect(verify('twilio', request(headers, body, 'https://voice.example.com:443/telephony/twilio/voice'), twilioCredentials)).toEqual({ ok: true });
});

test('Telnyx: a signature more than five minutes old, or from the future, is refused as a replay', () => {
  const sixMinutesAgo = new Date(Date.now() - 6 * 60_000);
  const stale = signedWebhook({ carrier: 'telnyx', key: telnyxKey, at: sixMinutesAgo }, URL_AS_CONFIGURED, params);
  expect(verify('telnyx', request(stale.headers, stale.body), telnyxCredentials)).toMatchObject({ ok: false, reason: expect.stringMatching(/5 minutes/) });
  const fourMinutesAgo = signedWebhook({ carrier: 'telnyx', key: telnyxKey, at: new Date(Date.now() - 4 * 60_000) }, URL_AS_CONFIGURED, params);
  expect(verify('telnyx', request(fourMinutesAgo.headers, fourMinutesAgo.body), telnyxCredentials)).toEqual({ ok: true });
  const future = signedWebhook({ carrier: 'telnyx', key: telnyxKey, at: new Date(Date.now() + 6 * 60_000) }, URL_AS_CONFIGURED, params);
  expect(verify('telnyx', request(future.headers, future.body), telnyxCredentials).ok).toBe(false);
});

test('Telnyx: a timestamp changed after signing is refused (it is part of what is signed)', () => {
  const { headers, body } = signedWebhook({ carrier: 'telnyx', key: telnyxKey }, URL_AS_CONFIGURED, params);
  const moved = { ...headers, 'telnyx-timestamp': String(Number(headers['telnyx-timestamp']) - 1) };
  expect(verify('telnyx', request(moved, body), telnyxCredentials).ok).toBe(false);
});

test('Telnyx: a garbled signature or public key is refused, not thrown', () => {
  const { headers, body } = signedWebhook({ carrier: 'telnyx', key: telnyxKey }, URL_AS_CONFIGURED, params);
  expect(verify('telnyx', request({ ...headers, 'telnyx-signature-ed25519': 'not base64 at all!' }, body), telnyxCredentials).ok).toBe(false);
  expect(verify('telnyx', request(headers, body), { ...telnyxCredentials, publicKey: 'c2hvcnQ=' })).toMatchObject({ ok: false, reason: expect.stringMatching(/public key/) });
});

test('Plivo: any one of several comma-separated signatures may match (as during a token rotation)', () => {
  const { headers, body } = signedWebhook({ carrier: 'plivo', authToken: plivoCredentials.authToken, nonce: '83920183920' }, URL_AS_CONFIGURED, params);
  const several = { ...headers, 'X-Plivo-Signature-V3': `bm90IGl0, ${headers['X-Plivo-Signature-V3']}` };
  expect(verify('plivo', request(several, body), plivoCredentials)).toEqual({ ok: true });
  const otherNonce = { ...headers, 'X-Plivo-Signature-V3-Nonce': '1' };
  expect(verify('plivo', request(otherNonce, body), plivoCredentials).ok).toBe(false);
});
