// API keys and session tokens: random secrets shown once and stored only as SHA-256 digests.
import crypto, { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 of the bytes read as one big number: URL-safe, no padding, double-click selectable. */
export function base62(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  // 32 bytes take at most 43 digits; pad so every token has the same length.
  return out.padStart(Math.ceil((bytes.length * 8) / Math.log2(62)), '0');
}

export const API_KEY_PREFIX = 'vfk_';
/** How much of a secret is kept in the clear to tell keys and sessions apart in lists. */
export const VISIBLE_PREFIX_LENGTH = 12;

/** SHA-256, hex: one call where Node has it (every request with a key pays this), else a Hash object. */
export const digest: (secret: string) => string =
  typeof crypto.hash === 'function' ? (secret) => crypto.hash('sha256', secret, 'hex') : (secret) => createHash('sha256').update(secret).digest('hex');

export function newApiKey(): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX + base62(randomBytes(32));
  return { key, prefix: key.slice(0, VISIBLE_PREFIX_LENGTH), hash: digest(key) };
}

export function newSessionToken(): { token: string; prefix: string; hash: string } {
  const token = base62(randomBytes(32));
  return { token, prefix: token.slice(0, VISIBLE_PREFIX_LENGTH), hash: digest(token) };
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) && value.length <= 100;
}
