// Signatures of outgoing requests, per the Standard Webhooks convention (standardwebhooks.com),
// so a receiver can check with any of its libraries that a request came from this server and was
// not replayed: `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
// (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, under the secret's bytes). Used for webhooks
// (outcomes/) and for a flow tool's `http` action (engine/), which is signed the same way.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new secret, `whsec_` + 32 random bytes in base64, as Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** A message id: one per event, the same across its retries, so receivers can drop duplicates. */
export function newWebhookMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

function secretBytes(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length < 16) throw new Error('a webhook secret is at least 16 bytes of base64');
  return bytes;
}

/** The base64 HMAC-SHA256 of `id.timestamp.body`. */
export function webhookSignature(secret: string, id: string, timestampSecs: number, body: string): string {
  return createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSecs}.${body}`).digest('base64');
}

/** The three headers a signed request carries; `body` is the exact text sent. */
export function signWebhook(secret: string, id: string, body: string, timestampSecs = Math.floor(Date.now() / 1000)): SignatureHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSecs),
    'webhook-signature': `v1,${webhookSignature(secret, id, timestampSecs, body)}`,
  };
}

/**
 * A receiver's check (for our own tests and tools): true when one of the space-separated `v1,`
 * signatures matches and the timestamp is within `toleranceSecs` of now.
 */
export function verifyWebhook(secret: string, headers: SignatureHeaders, body: string, nowSecs = Date.now() / 1000, toleranceSecs = 300): boolean {
  const timestamp = Number(headers['webhook-timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(nowSecs - timestamp) > toleranceSecs) return false;
  const expected = Buffer.from(webhookSignature(secret, headers['webhook-id'], timestamp, body));
  return headers['webhook-signature'].split(' ').some((part) => {
    const [version, signature] = part.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
