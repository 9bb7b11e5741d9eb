// Digest authentication of a call (RFC 3261 §22, RFC 2617 with qop=auth, MD5: what PBXs and trunks
// speak). A call from an address the account does not list is challenged with 401 when the
// account set a SIP username and password; the caller's INVITE again, with Authorization, is
// taken when its response matches.
//
// The nonce is stateless: a time and an HMAC of it under a key made when the endpoint starts, so
// nothing is kept per challenge and a flood of INVITEs costs no memory. It is good for five
// minutes; an older one is answered with a fresh challenge marked stale. (With several nodes, a
// challenge made by one node is not taken by another: a peer sends its answer where it sent the
// INVITE, so this matters only behind a load balancer that splits one call's messages.)
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { splitComma } from './message.ts';

export const REALM = 'voxflow';
const NONCE_LIFETIME_MS = 5 * 60_000;

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

export class DigestAuth {
  private readonly key = randomBytes(32);

  /** The WWW-Authenticate value of a challenge. */
  challenge(stale = false): string {
    const time = Date.now().toString(36);
    const nonce = `${time}.${this.sign(time)}`;
    return `Digest realm="${REALM}", nonce="${nonce}", algorithm=MD5, qop="auth"${stale ? ', stale=true' : ''}`;
  }

  /**
   * Checks an Authorization header value against the account's username and password.
   * `stale` when the answer was right for a nonce that has expired (the caller retries at once).
   */
  verify(authorization: string | undefined, method: string, credentials: { username: string; password: string }): 'ok' | 'stale' | 'wrong' {
    if (!authorization || !/^digest\s/i.test(authorization)) return 'wrong';
    const fields = parseFields(authorization.replace(/^digest\s+/i, ''));
    const { username, realm, nonce, uri, response } = fields;
    if (!username || !realm || !nonce || !uri || !response || realm !== REALM) return 'wrong';
    if (fields.algorithm && fields.algorithm.toUpperCase() !== 'MD5') return 'wrong';
    const [time, mac] = nonce.split('.');
    if (!time || !mac || !safeEqual(mac, this.sign(time))) return 'wrong';
    const ha1 = md5(`${credentials.username}:${REALM}:${credentials.password}`);
    const ha2 = md5(`${method}:${uri}`);
    const expected = fields.qop
      ? fields.qop === 'auth' && fields.nc && fields.cnonce
        ? md5(`${ha1}:${nonce}:${fields.nc}:${fields.cnonce}:auth:${ha2}`)
        : null
      : md5(`${ha1}:${nonce}:${ha2}`);
    if (!expected || !safeEqual(username, credentials.username) || !safeEqual(response.toLowerCase(), expected)) return 'wrong';
    const issued = parseInt(time, 36);
    return Number.isFinite(issued) && Date.now() - issued <= NONCE_LIFETIME_MS ? 'ok' : 'stale';
  }

  private sign(time: string): string {
    return createHmac('sha256', this.key).update(time).digest('base64url').slice(0, 22);
  }
}

function parseFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of splitComma(text)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    fields[part.slice(0, eq).trim().toLowerCase()] = part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return fields;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
