// POST /auth/signup and POST /auth/login: an email and a password in, an access token out.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { SIGNUP_CREDIT_CENTS } from '../../billing/prices.ts';
import { passwordProblem } from '../../security/password-policy.ts';
import { QueueFullError } from '../../security/work-queue.ts';
import { EmailTakenError } from '../../store/store.ts';
import { parseInput } from '../../http/validation.ts';

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

export async function authRoutes(app: FastifyInstance): Promise<void> {
  const { store, passwords, accessTokens } = app.services;
  const routeConfig = { auth: 'none' as const, authAttempt: true, carriesSecret: true };

  app.post('/auth/signup', { config: routeConfig }, async (request) => {
    const { email, password } = parseInput(Credentials, request.body);
    if (store.accounts.findByEmail(email)) throw new AppError('email_taken');
    const passwordHash = await hashingBounded(() => passwords.hash(password));
    try {
      const account = await store.accounts.create({ email, passwordHash, signupCreditCents: SIGNUP_CREDIT_CENTS });
      return { access_token: await accessTokens.issue(account.id), token_type: 'bearer' };
    } catch (error) {
      // Two signups for the same email at once: the second loses at the unique index.
      if (error instanceof EmailTakenError) throw new AppError('email_taken');
      throw error;
    }
  });

  app.post('/auth/login', { config: routeConfig }, async (request) => {
    const { email, password } = parseInput(LoginCredentials, request.body);
    const account = store.accounts.findByEmail(email);
    // The same work and the same answer whether or not the email exists.
    const ok = await hashingBounded(() => (account ? passwords.verify(password, account.passwordHash) : passwords.verifyAgainstDecoy(password)));
    if (!account || !ok) throw new AppError('invalid_login');
    return { access_token: await accessTokens.issue(account.id), token_type: 'bearer' };
  });
}
