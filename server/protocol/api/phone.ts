// What the phone endpoints answer: numbers bound to flows (with the URLs to paste into the
// carrier's console), the do-not-call list, and an outbound call placed.
import { z } from 'zod';
import { UnixSeconds } from './accounts.ts';

export const CallStatusView = z.enum(['queued', 'ringing', 'answered', 'busy', 'no_answer', 'failed', 'completed']);

export const PhoneNumberView = z.object({
  id: z.string(),
  carrier: z.enum(['twilio', 'telnyx', 'plivo', 'vonage', 'sip']),
  /** E.164 for a carrier's number; a user part for a SIP number. */
  number: z.string(),
  flow_id: z.string(),
  label: z.string(),
  /** "A call comes in" in the carrier's console; null for SIP, which is reached over SIP. */
  webhook_url: z.string().nullable(),
  /** Where the carrier posts call status changes; null for SIP. */
  status_url: z.string().nullable(),
  created_at: UnixSeconds,
  last_call_at: UnixSeconds.nullable(),
  last_call_status: CallStatusView.nullable(),
});

export const DoNotCallEntry = z.object({ number: z.string(), created_at: UnixSeconds });

/** POST /v1/calls: the session that carries the call; its progress is on GET /v1/sessions/{id}. */
export const PlacedCall = z.object({
  session_id: z.string(),
  call_status: CallStatusView,
  carrier: z.string(),
  carrier_call_id: z.string().nullable(),
  from: z.string(),
  to: z.string(),
});
