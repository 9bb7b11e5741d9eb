// The phone_numbers and do_not_call tables' rows as both stores read them (sql.js and PostgreSQL
// share the schema), and how a row becomes the repository's object.
import type { DoNotCallEntry } from '../repositories/do-not-call.ts';
import type { Carrier, PhoneNumber } from '../repositories/phone-numbers.ts';
import type { CallStatus } from '../repositories/sessions.ts';

export interface PhoneNumberRow {
  id: string;
  account_id: string;
  carrier: string;
  number: string;
  flow_id: string;
  label: string;
  created_at: number;
  last_call_at: number | null;
  last_call_status: string | null;
}

export function toPhoneNumber(row: PhoneNumberRow): PhoneNumber {
  return {
    id: row.id,
    accountId: row.account_id,
    carrier: row.carrier as Carrier,
    number: row.number,
    flowId: row.flow_id,
    label: row.label,
    createdAt: row.created_at,
    lastCallAt: row.last_call_at,
    lastCallStatus: row.last_call_status as CallStatus | null,
  };
}

export interface DoNotCallRow {
  number: string;
  created_at: number;
}

export function toDoNotCallEntry(row: DoNotCallRow): DoNotCallEntry {
  return { number: row.number, createdAt: row.created_at };
}
