// Telnyx signs every webhook (TeXML's form posts and Call Control's JSON events alike) with
// ed25519: `telnyx-signature-ed25519` is the base64 signature of `${telnyx-timestamp}|${body}`,
// checked with the account's public key from the portal. A timestamp more than five minutes away
// from now is refused, so a captured request cannot be replayed later.
// https://developers.telnyx.com/docs/messaging/messages/receiving-webhooks
//
// Not the `telnyx` SDK (7.24.0) for this: its check is the same ed25519 verify through WebCrypto,
// and the package is 37 MB that takes 260 ms to load at startup; the REST calls we make are three
// small POSTs (calls.ts), and its client would need its own retries turned off to sit under ours.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ParsedWebhook, TelnyxCredentials, VoiceWebhook, WebhookRequest, WebhookVerdict } from '../carrier.ts';
import { parseTwilioStyleWebhook } from '../form-webhook.ts';
import { header } from '../signing.ts';

export const TELNYX_TIMESTAMP_TOLERANCE_S = 300;

export function telnyxPublicKey(base64Key: string): KeyObject | null {
  const raw = Buffer.from(base64Key, 'base64');
  if (raw.length !== 32) return null;
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  } catch {
    return null;
  }
}

export function verifyTelnyxWebhook(request: WebhookRequest, credentials: TelnyxCredentials, now = new Date()): WebhookVerdict {
  const signature = header(request.headers, 'telnyx-signature-ed25519');
  const timestamp = header(request.headers, 'telnyx-timestamp');
  if (!signature || !timestamp) return { ok: false, reason: 'no telnyx-signature-ed25519 and telnyx-timestamp headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'telnyx-timestamp is not a Unix time' };
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > TELNYX_TIMESTAMP_TOLERANCE_S) return { ok: false, reason: 'telnyx-timestamp is more than 5 minutes from now' };
  const key = telnyxPublicKey(credentials.publicKey);
  if (!key) return { ok: false, reason: 'the account has no valid Telnyx public key' };
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== 64) return { ok: false, reason: 'telnyx-signature-ed25519 is not an ed25519 signature' };
  const valid = verify(null, Buffer.from(`${timestamp}|${request.rawBody}`, 'utf8'), key, bytes);
  return valid ? { ok: true } : { ok: false, reason: 'telnyx-signature-ed25519 does not match the body' };
}

/** TeXML posts Twilio's form fields; Call Control posts JSON events ({data: {event_type, payload}}). */
export function parseTelnyxWebhook(body: unknown): ParsedWebhook {
  const data = (body as { data?: { event_type?: unknown; payload?: unknown } } | null)?.data;
  if (data && typeof data === 'object' && typeof data.event_type === 'string') return parseCallControlEvent(data.event_type, data.payload);
  return parseTwilioStyleWebhook(body);
}

const HANGUP_STATUS: Record<string, VoiceWebhook['status']> = {
  normal_clearing: 'completed',
  user_busy: 'busy',
  call_rejected: 'busy',
  timeout: 'no_answer',
  no_answer: 'no_answer',
  originator_cancel: 'no_answer',
};

function parseCallControlEvent(eventType: string, payload: unknown): ParsedWebhook {
  if (typeof payload !== 'object' || payload === null) return { ok: false, reason: `${eventType} without a payload` };
  const fields = payload as Record<string, unknown>;
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : undefined);
  const callId = text('call_control_id');
  if (!callId) return { ok: false, reason: `${eventType} without a call_control_id` };
  const base = { callId, from: text('from') ?? '', to: text('to') ?? '', direction: text('direction') === 'outgoing' ? ('outbound' as const) : ('inbound' as const) };
  switch (eventType) {
    case 'call.initiated':
      return { ok: true, call: { ...base, status: 'queued' } };
    case 'call.answered':
      return { ok: true, call: { ...base, status: 'answered' } };
    case 'call.hangup':
      return { ok: true, call: { ...base, status: HANGUP_STATUS[text('hangup_cause') ?? ''] ?? 'failed' } };
    case 'call.machine.detection.ended':
    case 'call.machine.premium.detection.ended': {
      const result = text('result') ?? '';
      const answeredBy = result.startsWith('human') ? 'human' : result === 'machine' ? 'machine' : result === 'fax_detected' ? 'fax' : 'unknown';
      return { ok: true, call: { ...base, status: 'answered', answeredBy } };
    }
    case 'call.machine.greeting.ended':
    case 'call.machine.premium.greeting.ended':
      return { ok: true, call: { ...base, status: 'answered', answeredBy: 'machine_end' } };
    default:
      return { ok: false, reason: `unhandled Telnyx event ${eventType}` };
  }
}
