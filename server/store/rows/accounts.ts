// The accounts tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.
import type { Account } from '../repositories/accounts.ts';

export interface AccountRow {
  id: string;
  email: string;
  password_hash: string;
  created_at: number;
  signed_out_at: number | null;
}

export function toAccount(row: AccountRow): Account {
  return { id: row.id, email: row.email, passwordHash: row.password_hash, createdAt: row.created_at, signedOutAt: row.signed_out_at ?? null };
}
