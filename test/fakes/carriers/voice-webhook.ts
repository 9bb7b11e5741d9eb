// The carriers' voice webhooks as they arrive: a form-encoded POST of the call's fields with the
// carrier's real signature headers (Telnyx TeXML posts the same Twilio-style form, signed with
// ed25519 over the raw body).
import type { CarrierName } from '../../../server/transports/carriers/carrier.ts';
import { signPlivo, signTelnyx, signTwilio, type TelnyxSigningKey } from './signing.ts';

export type WebhookSigner =
  | { carrier: 'twilio'; authToken: string }
  | { carrier: 'telnyx'; key: TelnyxSigningKey; at?: Date }
  | { carrier: 'plivo'; authToken: string; nonce?: string };

export interface SentWebhook {
  status: number;
  contentType: string;
  body: string;
}

const USER_AGENT: Record<CarrierName, string> = {
  twilio: 'TwilioProxy/1.1',
  telnyx: 'telnyx-webhooks',
  plivo: 'PlivoHTTP',
};

/** Headers and body of a webhook, signed; `url` is the public URL the carrier was given. */
export function signedWebhook(signer: WebhookSigner, url: string, params: Record<string, string>): { headers: Record<string, string>; body: string } {
  const body = new URLSearchParams(params).toString();
  const signature =
    signer.carrier === 'twilio' ? signTwilio(signer.authToken, url, params) : signer.carrier === 'telnyx' ? signTelnyx(signer.key, body, signer.at) : signPlivo(signer.authToken, url, params, signer.nonce);
  return { headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT[signer.carrier], ...signature }, body };
}

/** POSTs the webhook to `url` (or to `deliverTo`, when the server sits behind a public URL). */
export async function sendVoiceWebhook(signer: WebhookSigner, url: string, params: Record<string, string>, deliverTo = url): Promise<SentWebhook> {
  const { headers, body } = signedWebhook(signer, url, params);
  const response = await fetch(deliverTo, { method: 'POST', headers, body });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() };
}

/** An inbound call's first webhook, with the fields each carrier sends. */
export function inboundCallParams(carrier: CarrierName, call: { callId: string; from: string; to: string }): Record<string, string> {
  switch (carrier) {
    case 'twilio':
      return { AccountSid: 'AC00000000000000000000000000000000', ApiVersion: '2010-04-01', CallSid: call.callId, CallStatus: 'ringing', Called: call.to, Caller: call.from, Direction: 'inbound', From: call.from, To: call.to };
    case 'telnyx':
      return { AccountSid: '61bf923e-5e4d-4595-a110-56190ea18a1b', CallSid: call.callId, CallSessionId: 'b0e6141e-c81c-11f0-abac-02420aef93a0', CallStatus: 'ringing', ConnectionId: '1773070540731319841', Direction: 'inbound', From: call.from, To: call.to };
    case 'plivo':
      return { CallUUID: call.callId, CallStatus: 'ringing', Direction: 'inbound', Event: 'StartApp', From: call.from, To: call.to, CallerName: '' };
  }
}
