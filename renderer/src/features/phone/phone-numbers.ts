// The phone screen's model, pure: which carriers a number can be bound to here, how a number is
// checked before it is sent, where each carrier's console takes the two URLs, and how a call's
// status reads. No DOM.
import type { CallStatus, PhoneCarrier, PhoneNumberView } from '../../lib/api-types.ts';

/** The carriers a studio user can bind a number to (docs/phone-calls.md): the ones calls run on. */
export const BINDABLE_CARRIERS = ['twilio', 'telnyx', 'plivo'] as const satisfies readonly PhoneCarrier[];

const CARRIER_NAMES: Record<PhoneCarrier, string> = { twilio: 'Twilio', telnyx: 'Telnyx', plivo: 'Plivo', vonage: 'Vonage', sip: 'SIP' };

export function carrierName(carrier: string): string {
  return CARRIER_NAMES[carrier as PhoneCarrier] ?? carrier;
}

/** The server's own rule (E.164: a plus, a country code not starting with 0, 7 to 15 digits). */
const E164 = /^\+[1-9]\d{6,14}$/;

/**
 * A number as typed, in E.164 (spaces, dashes, dots and brackets dropped), or why it is not one.
 * What a person would type for a US number without the country code is not guessed at.
 */
export function checkE164(typed: string): { ok: true; number: string } | { ok: false; message: string } {
  const number = typed.trim().replace(/[\s\-().]/g, '');
  if (number === '') return { ok: false, message: 'Enter the number, in E.164 form: +15551234567.' };
  if (!number.startsWith('+')) return { ok: false, message: 'Start with + and the country code, e.g. +15551234567.' };
  if (!/^\+\d+$/.test(number)) return { ok: false, message: 'Only digits may follow the +, e.g. +15551234567.' };
  if (number[1] === '0') return { ok: false, message: 'A country code never starts with 0: e.g. +15551234567.' };
  if (!E164.test(number)) return { ok: false, message: `E.164 numbers have 7 to 15 digits after the +; this has ${number.length - 1}.` };
  return { ok: true, number };
}

/** Where the carrier's console takes the number's two URLs, in its own words. */
export interface CarrierSetup {
  webhook: string;
  status: string;
}

export function carrierSetup(carrier: PhoneCarrier): CarrierSetup | null {
  switch (carrier) {
    case 'twilio':
      return {
        webhook: 'Twilio console → Phone Numbers → Active numbers → this number → Voice Configuration: “A call comes in”, Webhook, HTTP POST.',
        status: 'The same page: “Call status changes”.',
      };
    case 'telnyx':
      return {
        webhook: 'Telnyx portal → Voice → Programmable Voice → TeXML Applications → your application: “Webhook URL” (Voice Method POST); assign this number to it.',
        status: 'The same TeXML application: “Status Callback”.',
      };
    case 'plivo':
      return {
        webhook: 'Plivo console → Voice → Applications → your application: “Answer URL” (POST); link this number to it.',
        status: 'The same application: “Hangup URL”.',
      };
    default:
      return null;
  }
}

const CALL_STATUS: Record<CallStatus, string> = {
  queued: 'Queued',
  ringing: 'Ringing',
  answered: 'Answered',
  busy: 'Busy',
  no_answer: 'No answer',
  failed: 'Failed',
  completed: 'Completed',
};

export function callStatusLabel(status: CallStatus | null | undefined): string {
  return status ? CALL_STATUS[status] : '—';
}

/** The flows a number may answer with: those with a published version (drafts never take real calls). */
export function answerableFlows<T extends { id: string; name: string; published_version?: number }>(flows: readonly T[]): T[] {
  return flows.filter((flow) => (flow.published_version ?? 0) >= 1).sort((a, b) => a.name.localeCompare(b.name));
}

/** Newest first, as numbers are added. */
export function sortNumbers(numbers: readonly PhoneNumberView[]): PhoneNumberView[] {
  return [...numbers].sort((a, b) => b.created_at - a.created_at || a.number.localeCompare(b.number));
}
