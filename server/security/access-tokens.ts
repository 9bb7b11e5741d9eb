// Access tokens for the dashboard and account management: HS256 JWTs with the algorithm pinned
// and issuer, audience and expiry checked.
import { SignJWT, errors, jwtVerify } from 'jose';

const ISSUER = 'voxflow';
const AUDIENCE = 'voxflow-api';
/** Refresh tokens are good only at POST /auth/refresh: another audience, so one is never an access token. */
const REFRESH_AUDIENCE = 'voxflow-refresh';
export const ACCESS_TOKEN_TTL_SECONDS = 24 * 60 * 60;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;

/**
 * `issuedAt` is in Unix seconds with milliseconds (the `iat_ms` claim; `iat` alone for tokens
 * from before it), so a sign-in a moment after a sign-out is not taken for one before it.
 */
export type VerifiedToken = { ok: true; accountId: string; issuedAt: number } | { ok: false; reason: 'expired' | 'invalid' };

export class AccessTokens {
  private readonly key: Uint8Array;

  constructor(secret: Uint8Array) {
    if (secret.length < 32) throw new Error('the JWT secret must be at least 32 bytes');
    this.key = secret;
  }

  issue(accountId: string, now = Date.now()): Promise<string> {
    return this.sign(accountId, AUDIENCE, ACCESS_TOKEN_TTL_SECONDS, now);
  }

  /** A long-lived token the studio keeps in an HttpOnly cookie, traded for access tokens. */
  issueRefresh(accountId: string, now = Date.now()): Promise<string> {
    return this.sign(accountId, REFRESH_AUDIENCE, REFRESH_TOKEN_TTL_SECONDS, now);
  }

  verify(token: string): Promise<VerifiedToken> {
    return this.check(token, AUDIENCE);
  }

  verifyRefresh(token: string): Promise<VerifiedToken> {
    return this.check(token, REFRESH_AUDIENCE);
  }

  private sign(accountId: string, audience: string, ttlSeconds: number, now: number): Promise<string> {
    const issuedAt = Math.floor(now / 1000);
    return new SignJWT({ iat_ms: now })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(accountId)
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttlSeconds)
      .sign(this.key);
  }

  /** Whether a verified token was issued before the account's last sign-out (so it no longer works). */
  static signedOutSince(token: { issuedAt: number }, account: { signedOutAt: number | null }): boolean {
    return account.signedOutAt !== null && token.issuedAt < account.signedOutAt;
  }

  private async check(token: string, audience: string): Promise<VerifiedToken> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, audience, requiredClaims: ['sub', 'exp'] });
      if (typeof payload.sub !== 'string' || !payload.sub) return { ok: false, reason: 'invalid' };
      const issuedAt = typeof payload.iat_ms === 'number' ? payload.iat_ms / 1000 : (payload.iat ?? 0);
      return { ok: true, accountId: payload.sub, issuedAt };
    } catch (error) {
      return { ok: false, reason: error instanceof errors.JWTExpired ? 'expired' : 'invalid' };
    }
  }
}
