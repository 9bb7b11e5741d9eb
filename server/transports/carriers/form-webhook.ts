// Twilio's voice webhook fields, which Telnyx's TeXML copies (CallSid, From, To, Direction,
// CallStatus, AnsweredBy): one reading for both.
import type { AnsweredBy, CallStatus, ParsedWebhook } from './carrier.ts';

const STATUS: Record<string, CallStatus> = {
  queued: 'queued',
  initiated: 'queued',
  ringing: 'ringing',
  'in-progress': 'answered',
  answered: 'answered',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  failed: 'failed',
  // Cancelled before it was answered (by us, or the caller hung up while it rang).
  canceled: 'no_answer',
};

export function answeredByOf(value: string | undefined): AnsweredBy | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'human') return 'human';
  if (value.startsWith('machine_end')) return 'machine_end';
  if (value.startsWith('machine')) return 'machine';
  if (value.startsWith('fax')) return 'fax';
  return 'unknown';
}

export function parseTwilioStyleWebhook(body: unknown, callIdField = 'CallSid'): ParsedWebhook {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'the webhook has no form fields' };
  const params = body as Record<string, unknown>;
  const text = (key: string) => (typeof params[key] === 'string' ? (params[key] as string) : undefined);
  const callId = text(callIdField);
  if (!callId) return { ok: false, reason: `the webhook has no ${callIdField}` };
  const status = STATUS[text('CallStatus') ?? ''];
  if (!status) return { ok: false, reason: `unknown CallStatus ${JSON.stringify(text('CallStatus') ?? null)}` };
  const direction = (text('Direction') ?? 'inbound').startsWith('outbound') ? 'outbound' : 'inbound';
  const answeredBy = answeredByOf(text('AnsweredBy'));
  return {
    ok: true,
    call: { callId, from: text('From') ?? '', to: text('To') ?? '', direction, status, ...(answeredBy ? { answeredBy } : {}) },
  };
}
