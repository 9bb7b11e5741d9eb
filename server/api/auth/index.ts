// POST /auth/signup and POST /auth/login: an email and a password in, an access token out.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { SIGNUP_CREDIT_CENTS } from '../../billing/prices.ts';
import { passwordProblem } from '../../security/password-policy.ts';
import { AccessTokens, REFRESH_TOKEN_TTL_SECONDS } from '../../security/access-tokens.ts';
import { QueueFullError } from '../../concurrency/work-queue.ts';
import { EmailTakenError } from '../../store/store.ts';
import { noBody } from '../../http/api-contract.ts';
import { SignedIn } from '../../protocol/api/accounts.ts';

const Credentials = z.object({
  email: z.string().trim().max(254, 'at most 254 characters').pipe(z.email('must be an email address')),
  password: z
    .string()
    .min(8, 'at least 8 characters')
    .max(1024, 'at most 1024 characters')
    .superRefine((password, context) => {
      const problem = passwordProblem(password);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    }),
});
// Login checks only the shape: a password policy change must not lock out existing accounts.
const LoginCredentials = z.object({ email: z.string().trim().min(1).max(254), password: z.string().min(1).max(1024) });

async function hashingBounded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof QueueFullError) throw new AppError('at_capacity', 'Too many sign-ins at once; try again in a moment.');
    throw error;
  }
}

// The studio in a browser keeps its sign-in across tabs and reloads without keeping a token where
// page scripts can read it: login and signup also set a refresh token in an HttpOnly,
// SameSite=Strict cookie scoped to /auth, and the studio trades it at POST /auth/refresh for an
// access token it holds in memory only. SameSite=Strict keeps other sites' pages from sending
// it; the Origin check (http/host-and-origin.ts) refuses foreign pages' POSTs besides. Backends
// that call the API ignore the cookie. The refresh token is stateless (a JWT for another
// audience, 30 days). Logging out clears the cookie and records the time on the account: every
// access and refresh token issued before it is refused from then on, so a token another tab (or
// browser) of the account still holds stops working at once, not when it expires.
const REFRESH_COOKIE = 'voxflow_refresh';

function refreshCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${REFRESH_COOKIE}=${value}; Path=/auth; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** The refresh cookie's value, if the request carries one. */
function refreshTokenOf(cookieHeader: string | undefined): string | null {
  for (const part of (cookieHeader ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === REFRESH_COOKIE) return part.slice(at + 1).trim() || null;
  }
  return null;
}

export async function authRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, passwords, accessTokens } = app.services;
  const routeConfig = { auth: 'none' as const, authAttempt: true, carriesSecret: true };
  const secureCookies = () => app.services.publicUrl().startsWith('https:');

  /** The answer to a sign-in: an access token, and the refresh cookie beside it. */
  const signedIn = async (reply: FastifyReply, accountId: string, email: string) => {
    reply.header('set-cookie', refreshCookie(await accessTokens.issueRefresh(accountId), REFRESH_TOKEN_TTL_SECONDS, secureCookies()));
    return { access_token: await accessTokens.issue(accountId), token_type: 'bearer' as const, email };
  };

  app.post('/auth/signup', { config: routeConfig, schema: { body: Credentials, response: { 200: SignedIn } } }, async (request, reply) => {
    const { email, password } = request.body;
    if (await store.accounts.findByEmail(email)) throw new AppError('email_taken');
    const passwordHash = await hashingBounded(() => passwords.hash(password));
    try {
      const account = await store.accounts.create({ email, passwordHash, signupCreditCents: SIGNUP_CREDIT_CENTS });
      return await signedIn(reply, account.id, account.email);
    } catch (error) {
      // Two signups for the same email at once: the second loses at the unique index.
      if (error instanceof EmailTakenError) throw new AppError('email_taken');
      throw error;
    }
  });

  app.post('/auth/login', { config: routeConfig, schema: { body: LoginCredentials, response: { 200: SignedIn } } }, async (request, reply) => {
    const { email, password } = request.body;
    const account = await store.accounts.findByEmail(email);
    // The same work and the same answer whether or not the email exists.
    const ok = await hashingBounded(() => (account ? passwords.verify(password, account.passwordHash) : passwords.verifyAgainstDecoy(password)));
    if (!account || !ok) throw new AppError('invalid_login');
    return signedIn(reply, account.id, account.email);
  });

  // A new access token for the studio's refresh cookie (a new tab, a reload, an expired token).
  app.post('/auth/refresh', { config: routeConfig, schema: { response: { 200: SignedIn } } }, async (request, reply) => {
    const token = refreshTokenOf(request.headers.cookie);
    if (!token) throw new AppError('missing_credentials', 'Not signed in in this browser: sign in with your email and password.');
    const verified = await accessTokens.verifyRefresh(token);
    const found = verified.ok ? await store.accounts.findById(verified.accountId) : null;
    const account = found && verified.ok && !AccessTokens.signedOutSince(verified, found) ? found : null;
    if (!account) {
      reply.header('set-cookie', refreshCookie('', 0, secureCookies()));
      throw new AppError(verified.ok || verified.reason === 'invalid' ? 'invalid_credentials' : 'token_expired', 'The sign-in in this browser has expired: sign in again.');
    }
    return signedIn(reply, account.id, account.email);
  });

  app.post('/auth/logout', { config: { auth: 'none' as const }, schema: { response: { 204: noBody('Signed out: the refresh cookie is cleared and every token issued before now is refused') } } }, async (request, reply) => {
    const token = refreshTokenOf(request.headers.cookie);
    const verified = token ? await accessTokens.verifyRefresh(token) : null;
    if (verified?.ok) await store.accounts.signOut(verified.accountId, Date.now() / 1000);
    reply.header('set-cookie', refreshCookie('', 0, secureCookies()));
    return reply.status(204).send();
  });
}
