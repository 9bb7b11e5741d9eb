// How each carrier signs the requests it sends us, written from the carriers' documentation and
// independently of the product's checks, so a test that passes proves the two agree with the
// documents rather than with each other.
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

/** Twilio: base64 HMAC-SHA1 (auth token) of the URL followed by each field's name and value, sorted by name. */
export function signTwilio(authToken: string, url: string, params: Record<string, string>): Record<string, string> {
  const data = url + Object.keys(params).sort().map((key) => key + params[key]).join('');
  return { 'X-Twilio-Signature': createHmac('sha1', authToken).update(data).digest('base64') };
}

export interface TelnyxSigningKey {
  privateKey: KeyObject;
  /** Raw 32-byte public key in base64, as the Telnyx portal shows it. */
  publicKeyBase64: string;
}

export function telnyxSigningKey(): TelnyxSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  return { privateKey, publicKeyBase64: Buffer.from(jwk.x!, 'base64url').toString('base64') };
}

/** Telnyx: ed25519 over `${timestamp}|${body}`, timestamp in Unix seconds. */
export function signTelnyx(key: TelnyxSigningKey, rawBody: string, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = sign(null, Buffer.from(`${timestamp}|${rawBody}`), key.privateKey).toString('base64');
  return { 'telnyx-signature-ed25519': signature, 'telnyx-timestamp': timestamp };
}

/** Plivo V3 for a POST: HMAC-SHA256 (auth token) of the URL, '?', sorted query '.' or nothing, sorted fields, '.', nonce. */
export function signPlivo(authToken: string, url: string, params: Record<string, string>, nonce = String(Math.floor(Math.random() * 1e15))): Record<string, string> {
  const parsed = new URL(url);
  const byName = (a: [string, string], b: [string, string]) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1);
  const query = [...parsed.searchParams].sort(byName).map(([k, v]) => `${k}=${v}`).join('&');
  const fields = Object.entries(params).sort(byName).map(([k, v]) => k + v).join('');
  let base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  if (query) base += `?${query}${fields ? `.${fields}` : ''}`;
  else if (fields) base += `?${fields}`;
  const signature = createHmac('sha256', authToken).update(`${base}.${nonce}`).digest('base64');
  return { 'X-Plivo-Signature-V3': signature, 'X-Plivo-Signature-V3-Nonce': nonce };
}
