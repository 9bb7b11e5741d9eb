import { EmailTakenError } from '../errors.ts';

export interface Account {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: number;
  /**
   * When the account last signed out of the studio (Unix seconds, fractional), or null: every
   * access and refresh token issued before it is refused.
   */
  signedOutAt: number | null;
}

export interface NewAccount {
  email: string;
  passwordHash: string;
  /**
   * Free credit granted in the same transaction (ledger key `signup:<account id>`), so a crash
   * can never leave an account that missed its signup grant.
   */
  signupCreditCents?: number;
}

export interface AccountsRepository {
  /** Rejects with EmailTakenError when the email exists in any letter case. */
  create(input: NewAccount): Promise<Account>;
  findByEmail(email: string): Promise<Account | null>;
  findById(id: string): Promise<Account | null>;
  /** Records a sign-out at `at` (Unix seconds): tokens issued before it stop working. */
  signOut(id: string, at: number): Promise<void>;
}
