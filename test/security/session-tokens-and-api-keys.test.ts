// A session token and an API key are 32 random bytes as base62: 43 characters a client can
// select with a double click, stored only as their SHA-256. What a client sees of them does not
// change with how they are made (from a pool of random bytes, by long division in doubles).
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base62, newApiKey, newSessionToken, pooledRandomBytes } from '../../server/security/opaque-tokens.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** The number a base62 text spells, as a BigInt. */
const decode = (text: string) => [...text].reduce((n, digit) => n * 62n + BigInt(ALPHABET.indexOf(digit)), 0n);
const numberOf = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);

describe('session tokens and API keys', () => {
  it('are 43 base62 characters, each new, stored as their SHA-256 with a 12-character prefix in the clear', () => {
    const tokens = Array.from({ length: 1000 }, () => newSessionToken());
    for (const { token, prefix, hash } of tokens) {
      expect(token).toMatch(/^[0-9A-Za-z]{43}$/);
      expect(prefix).toBe(token.slice(0, 12));
      expect(hash).toBe(createHash('sha256').update(token).digest('hex'));
    }
    expect(new Set(tokens.map((t) => t.token)).size).toBe(1000);
    const key = newApiKey();
    expect(key.key).toMatch(/^vfk_[0-9A-Za-z]{43}$/);
    expect(key.hash).toBe(createHash('sha256').update(key.key).digest('hex'));
  });

  it('spell the number their bytes make, padded to the same length for every token', () => {
    const cases = [Buffer.alloc(32), Buffer.alloc(32, 0xff), Buffer.from([1]), Buffer.from([0xff]), Buffer.alloc(0), Buffer.alloc(33, 0xff)];
    for (let length = 1; length <= 40; length++) for (let i = 0; i < 20; i++) cases.push(randomBytes(length));
    for (const bytes of cases) {
      const text = base62(bytes);
      expect(text).toHaveLength(Math.ceil((bytes.length * 8) / Math.log2(62)));
      expect(decode(text)).toBe(numberOf(bytes));
    }
    expect(base62(Buffer.alloc(32))).toBe('0'.repeat(43));
  });

  it('come from random bytes handed out once each, across the pool being filled again', () => {
    const drawn = Array.from({ length: 400 }, () => Buffer.from(pooledRandomBytes(32)).toString('hex'));
    expect(new Set(drawn).size).toBe(400);
    // Larger than the pool: drawn directly.
    expect(pooledRandomBytes(5000)).toHaveLength(5000);
  });
});
