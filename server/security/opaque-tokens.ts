// API keys and session tokens: random secrets shown once and stored only as SHA-256 digests.
import crypto, { createHash, randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Bytes the pool holds: 128 session tokens' worth. */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
let poolOffset = POOL_BYTES;

/**
 * `size` random bytes from the CSPRNG (as crypto.randomBytes), drawn from a pool filled 4 KiB at
 * a time, as Node's randomUUID draws its own: every session start mints a token and an id, and a
 * call into OpenSSL each, between a request's other work, cost 13 µs where a 32-byte slice costs
 * nothing. Each byte is handed out once. The answer is a view of the pool: read it at once (the
 * next call may refill the pool), and never hand it on.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES) return crypto.randomBytes(size);
  if (poolOffset + size > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}

/** 62⁴: four base-62 digits at a time, whose remainders and partial quotients stay exact in doubles. */
const CHUNK = 62 ** 4;

/**
 * Base62 of the bytes read as one big-endian number, padded with leading zeros to the digits the
 * longest such number takes (32 bytes: 43): URL-safe, no padding characters, double-click
 * selectable. Long division of 16-bit limbs in doubles, four digits a pass (the same digits as
 * BigInt division by 62 one digit at a time, without a BigInt per digit).
 */
export function base62(bytes: Uint8Array): string {
  const length = Math.ceil((bytes.length * 8) / Math.log2(62));
  const limbs: number[] = [];
  // An odd byte count leads with a limb of one byte.
  if (bytes.length % 2 === 1) limbs.push(bytes[0]!);
  for (let i = bytes.length % 2; i < bytes.length; i += 2) limbs.push(bytes[i]! * 256 + bytes[i + 1]!);
  const digits = new Array<string>(length);
  let at = length;
  let first = 0;
  while (at > 0) {
    let remainder = 0;
    for (let i = first; i < limbs.length; i++) {
      const current = remainder * 65536 + limbs[i]!;
      const quotient = Math.floor(current / CHUNK);
      limbs[i] = quotient;
      remainder = current - quotient * CHUNK;
    }
    while (first < limbs.length && limbs[first] === 0) first++;
    for (let k = 0; k < 4 && at > 0; k++) {
      const quotient = Math.floor(remainder / 62);
      digits[--at] = BASE62[remainder - quotient * 62]!;
      remainder = quotient;
    }
  }
  return digits.join('');
}

export const API_KEY_PREFIX = 'vfk_';
/** How much of a secret is kept in the clear to tell keys and sessions apart in lists. */
export const VISIBLE_PREFIX_LENGTH = 12;

/** SHA-256, hex: one call where Node has it (every request with a key pays this), else a Hash object. */
export const digest: (secret: string) => string =
  typeof crypto.hash === 'function' ? (secret) => crypto.hash('sha256', secret, 'hex') : (secret) => createHash('sha256').update(secret).digest('hex');

export function newApiKey(): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX + base62(pooledRandomBytes(32));
  return { key, prefix: key.slice(0, VISIBLE_PREFIX_LENGTH), hash: digest(key) };
}

export function newSessionToken(): { token: string; prefix: string; hash: string } {
  const token = base62(pooledRandomBytes(32));
  return { token, prefix: token.slice(0, VISIBLE_PREFIX_LENGTH), hash: digest(token) };
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) && value.length <= 100;
}
