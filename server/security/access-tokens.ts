// Access tokens for the dashboard and account management: HS256 JWTs with the algorithm pinned
// and issuer, audience and expiry checked.
import { SignJWT, errors, jwtVerify } from 'jose';

const ISSUER = 'voxflow';
const AUDIENCE = 'voxflow-api';
export const ACCESS_TOKEN_TTL_SECONDS = 24 * 60 * 60;

export type VerifiedToken = { ok: true; accountId: string } | { ok: false; reason: 'expired' | 'invalid' };

export class AccessTokens {
  private readonly key: Uint8Array;

  constructor(secret: Uint8Array) {
    if (secret.length < 32) throw new Error('the JWT secret must be at least 32 bytes');
    this.key = secret;
  }

  issue(accountId: string, now = Date.now()): Promise<string> {
    const issuedAt = Math.floor(now / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(accountId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ACCESS_TOKEN_TTL_SECONDS)
      .sign(this.key);
  }

  async verify(token: string): Promise<VerifiedToken> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE, requiredClaims: ['sub', 'exp'] });
      return typeof payload.sub === 'string' && payload.sub ? { ok: true, accountId: payload.sub } : { ok: false, reason: 'invalid' };
    } catch (error) {
      return { ok: false, reason: error instanceof errors.JWTExpired ? 'expired' : 'invalid' };
    }
  }
}
