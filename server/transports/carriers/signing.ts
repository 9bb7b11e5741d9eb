// Pieces the carriers' webhook signatures share. Comparisons run in constant time, so a forger
// learns nothing from how long a wrong signature took to refuse.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

export function hmacBase64(algorithm: 'sha1' | 'sha256', key: string, data: string): string {
  return createHmac(algorithm, key).update(data, 'utf8').digest('base64');
}

/** Constant time for equal lengths; a length differs only for a malformed signature, which is no secret. */
export function sameSignature(received: string, expected: string): boolean {
  const a = Buffer.from(received, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
