// Phone numbers bound to flows: a carrier's voice webhook names the number it was called on, and
// this says which account and flow answer it. A number belongs to one account on the whole
// server (every node): a real number (E.164) reaches one carrier at a time, so it is unique over
// all carriers; a SIP user part is unique among SIP numbers only (numberKey).
import type { CallStatus } from './sessions.ts';

export const CARRIERS = ['twilio', 'telnyx', 'plivo', 'vonage', 'sip'] as const;
export type Carrier = (typeof CARRIERS)[number];

/** What makes a number unique on the server: the number itself, or `sip:` and the user part for SIP. */
export function numberKey(carrier: Carrier, number: string): string {
  return carrier === 'sip' ? `sip:${number}` : number;
}

export interface PhoneNumber {
  id: string;
  accountId: string;
  carrier: Carrier;
  /** E.164 for a carrier's number; for 'sip' a user part or a number. */
  number: string;
  flowId: string;
  label: string;
  createdAt: number;
  /** When the number last took or placed a call, and how that call went; null before its first. */
  lastCallAt: number | null;
  lastCallStatus: CallStatus | null;
}

export interface NewPhoneNumber {
  accountId: string;
  carrier: Carrier;
  number: string;
  flowId: string;
  label: string;
}

export interface PhoneNumbersRepository {
  /** Throws PhoneNumberTakenError when any account (this one included) holds the number already. */
  create(input: NewPhoneNumber): Promise<PhoneNumber>;
  /** Newest first. */
  list(accountId: string): Promise<PhoneNumber[]>;
  /** Another account's number reads as absent. */
  get(accountId: string, id: string): Promise<PhoneNumber | null>;
  /** For a carrier's webhook, which knows the number but not yet the account. */
  findByCarrierNumber(carrier: Carrier, number: string): Promise<PhoneNumber | null>;
  /** False when the account had no number with that id. */
  delete(accountId: string, id: string): Promise<boolean>;
  /** The number's latest call: when, and its status (called again as the status moves on). */
  recordCall(id: string, at: number, status: CallStatus): Promise<void>;
}
