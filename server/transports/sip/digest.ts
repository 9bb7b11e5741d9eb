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

/**
 * Our answer to a registrar's or proxy's challenge (a 401's WWW-Authenticate, a 407's
 * Proxy-Authenticate): the Authorization (or Proxy-Authorization) value, MD5, with qop=auth when
 * offered. null when the challenge is not one we can answer (another algorithm, auth-int only).
 */
export function answerChallenge(
  challenge: string,
  request: { method: string; uri: string },
  credentials: { username: string; password: string },
  nonceCount = 1,
): string | null {
  if (!/^digest\s/i.test(challenge)) return null;
  const fields = parseFields(challenge.replace(/^digest\s+/i, ''));
  const { realm, nonce, opaque } = fields;
  if (realm === undefined || !nonce) return null;
  const algorithm = (fields.algorithm ?? 'MD5').toUpperCase();
  if (algorithm !== 'MD5') return null;
  const qops = (fields.qop ?? '').split(',').map((q) => q.trim().toLowerCase()).filter(Boolean);
  if (qops.length > 0 && !qops.includes('auth')) return null;
  const ha1 = md5(`${credentials.username}:${realm}:${credentials.password}`);
  const ha2 = md5(`${request.method}:${request.uri}`);
  const quote = (value: string) => `"${value.replace(/["\\]/g, '')}"`;
  const parts = [`Digest username=${quote(credentials.username)}`, `realm=${quote(realm)}`, `nonce=${quote(nonce)}`, `uri=${quote(request.uri)}`];
  if (qops.length > 0) {
    const nc = nonceCount.toString(16).padStart(8, '0');
    const cnonce = randomBytes(8).toString('hex');
    parts.push(`response=${quote(md5(`${ha1}:${nonce}:${nc}:${cnonce}:auth:${ha2}`))}`, 'qop=auth', `nc=${nc}`, `cnonce=${quote(cnonce)}`);
  } else {
    parts.push(`response=${quote(md5(`${ha1}:${nonce}:${ha2}`))}`);
  }
  parts.push('algorithm=MD5');
  if (opaque !== undefined) parts.push(`opaque=${quote(opaque)}`);
  return parts.join(', ');
}
