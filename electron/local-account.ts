// The desktop's local account: the studio signs in to it without a prompt. The main process has
// the server in-process, so it creates the account through the store and issues the JWT through
// the server's own AccessTokens; no password is kept anywhere.
//
// Why no stored password: anyone who can read the user-data folder can already read `jwt.key`
// beside it and mint tokens, so a password encrypted with safeStorage (or a 0600 file) would
// protect nothing more, and on Linux safeStorage often falls back to a fixed key. The account
// gets the hash of a random password that is thrown away, so `/auth/login` can never open it
// and takes as long as for any other account.
//
// Which account is "ours" is recorded in the data folder (desktop-account.json), not
// inferred from the email: another local program could sign up local@voxflow.desktop on the
// loopback port before the first sign-in, and the studio must not adopt that account. The record
// lives beside the database so a backup of the folder carries both.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Services } from '../server/http/services.ts';
import { SIGNUP_CREDIT_CENTS } from '../server/billing/prices.ts';
import { replaceFileAtomically } from '../server/store/sqljs/durable-files.ts';
import { EmailTakenError, type Account } from '../server/store/store.ts';

export const LOCAL_ACCOUNT_EMAIL = 'local@voxflow.desktop';
export const LOCAL_ACCOUNT_FILE = 'desktop-account.json';

export interface LocalSignIn {
  access_token: string;
  email: string;
}

interface AccountRecord {
  account_id: string;
}

type AccountServices = Pick<Services, 'store' | 'passwords' | 'accessTokens'>;

/**
 * Returns the sign-in function the IPC hub calls. The account is created on the first call and
 * reused on every later one, in this run and after restarts; concurrent first calls create one.
 */
export function createLocalSignIn(services: AccountServices, dataDir: string): () => Promise<LocalSignIn> {
  let account: Promise<Account> | null = null;
  return async () => {
    account ??= ensureLocalAccount(services, dataDir).catch((error: unknown) => {
      // A failure (disk full, say) must not stick: the next sign-in tries again.
      account = null;
      throw error;
    });
    const { id, email } = await account;
    return { access_token: await services.accessTokens.issue(id), email };
  };
}

async function ensureLocalAccount(services: AccountServices, dataDir: string): Promise<Account> {
  const recordPath = join(dataDir, LOCAL_ACCOUNT_FILE);
  const record = await readRecord(recordPath);
  const existing = record ? await services.store.accounts.findById(record.account_id) : null;
  // A record without its account means the database was restored from before it existed: a
  // fresh account is the honest outcome, not an error that locks the user out of the studio.
  if (existing) return existing;

  const passwordHash = await services.passwords.hash(randomBytes(32).toString('base64url'));
  let created: Account | null = null;
  for (const email of [LOCAL_ACCOUNT_EMAIL, ...Array.from({ length: 3 }, otherLocalEmail)]) {
    try {
      created = await services.store.accounts.create({ email, passwordHash, signupCreditCents: SIGNUP_CREDIT_CENTS });
      break;
    } catch (error) {
      // Someone else holds the email (see the top of this file): take another one.
      if (!(error instanceof EmailTakenError)) throw error;
    }
  }
  if (!created) throw new Error('could not create the local account: every local email tried is taken');
  // Durable before the studio gets a token: flows made under an account the next start cannot
  // find again would look lost.
  await replaceFileAtomically(recordPath, Buffer.from(`${JSON.stringify({ account_id: created.id } satisfies AccountRecord)}\n`), true);
  return created;
}

function otherLocalEmail(): string {
  return `local-${randomBytes(4).toString('hex')}@voxflow.desktop`;
}

async function readRecord(path: string): Promise<AccountRecord | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<AccountRecord>;
    return typeof parsed.account_id === 'string' && parsed.account_id ? { account_id: parsed.account_id } : null;
  } catch {
    // A torn or hand-edited record reads as absent; the account it named is left alone.
    return null;
  }
}
