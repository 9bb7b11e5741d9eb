// Twilio signs each webhook with X-Twilio-Signature: base64 HMAC-SHA1, keyed with the account's
// auth token, over the full URL followed by every POST field's name and value, sorted by name.
// https://www.twilio.com/docs/usage/security#validating-requests
//
// Not the `twilio` SDK (6.2.0) for this: these lines are all its validateRequest does for a form
// POST, and the SDK is 29 MB over 54 packages (axios, jsonwebtoken, lodash pieces) that take
// 160 ms to load at startup; its REST client would need its own retries turned off to sit under
// ours. The REST calls we make are four form POSTs (calls.ts).
import type { TwilioCredentials, WebhookRequest, WebhookVerdict } from '../carrier.ts';
import { header, hmacBase64, sameSignature } from '../signing.ts';

export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  let data = url;
  for (const key of Object.keys(params).sort()) data += key + params[key];
  return hmacBase64('sha1', authToken, data);
}

export function verifyTwilioWebhook(request: WebhookRequest, credentials: TwilioCredentials): WebhookVerdict {
  const signature = header(request.headers, 'x-twilio-signature');
  if (!signature) return { ok: false, reason: 'no X-Twilio-Signature header' };
  // Twilio signs the URL as configured; behind a proxy the port may be added or dropped on the way.
  const matches = urlVariants(request.url).some((url) => sameSignature(signature, twilioSignature(credentials.authToken, url, request.params)));
  return matches ? { ok: true } : { ok: false, reason: 'X-Twilio-Signature does not match the URL and fields' };
}

/** The URL as received, with the default port written out, and without any port. */
function urlVariants(url: string): string[] {
  const match = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme, authority, rest] = match as unknown as [string, string, string, string];
  const host = authority.replace(/:\d+$/, '');
  const port = scheme.toLowerCase() === 'https' ? 443 : 80;
  return [...new Set([url, `${scheme}://${host}${rest}`, `${scheme}://${host}:${port}${rest}`])];
}
