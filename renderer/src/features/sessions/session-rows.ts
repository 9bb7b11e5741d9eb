// How the sessions screen words a session record: its status (a token never used, a live call,
// an ended one), why it ended, which flow it ran, and the totals above the table. Pure, no DOM.
import type { SessionView } from '../../lib/api-types.ts';

export type Tone = 'ok' | 'live' | 'muted' | 'warn' | 'danger';

export function sessionStatus(session: SessionView, nowMs: number): { label: string; tone: Tone } {
  switch (session.status) {
    case 'connected':
      return { label: 'Live', tone: 'live' };
    case 'ended':
      return session.end_reason === 'error' || session.end_reason === 'credits_exhausted' ? { label: 'Ended', tone: 'warn' } : { label: 'Ended', tone: 'ok' };
    case 'created':
      // The server says `expired` once a token can no longer connect; until the list is reloaded, its time says so.
      return session.expires_at !== null && nowMs / 1000 >= session.expires_at
        ? { label: 'Never connected', tone: 'muted' }
        : { label: 'Waiting to connect', tone: 'muted' };
    case 'expired':
      return { label: 'Never connected', tone: 'muted' };
    default:
      return { label: session.status, tone: 'muted' };
  }
}

const END_REASONS: Record<string, string> = {
  client_ended: 'Caller ended it',
  client_disconnected: 'Caller disconnected',
  credits_exhausted: 'Out of credits',
  error: 'Error',
  server_shutdown: 'Server stopped',
  idle: 'Nothing said for too long',
  max_duration: 'Reached the longest a call may run',
};

/** The end reasons the studio names (others are shown as they are written). */
export const END_REASON_CODES: readonly string[] = Object.keys(END_REASONS);

export function endReasonLabel(reason: string | null): string {
  if (reason === null) return '—';
  return END_REASONS[reason] ?? reason.replace(/_/g, ' ');
}

/** The flow a session ran, by its current name; an assistant session has none. */
export function flowLabel(session: SessionView, flowNames: ReadonlyMap<string, string>): string {
  if (session.flow_id === null) return 'Assistant (no flow)';
  return flowNames.get(session.flow_id) ?? 'Deleted flow';
}

/**
 * Which version of its flow a session ran (docs/flows.md#drafts): `v3`, `Draft` for a studio test
 * of unpublished changes, or null (no flow, or a session from before versions were kept).
 */
export function flowVersionLabel(session: Pick<SessionView, 'flow_id' | 'flow_version' | 'flow_draft'>): string | null {
  if (session.flow_id === null) return null;
  if (session.flow_draft) return 'Draft';
  return session.flow_version === null || session.flow_version === undefined ? null : `v${session.flow_version}`;
}

export function transportLabel(transport: string | null): string {
  if (transport === null) return '—';
  return ({ websocket: 'WebSocket', webrtc: 'WebRTC', ...CARRIERS } as Record<string, string>)[transport] ?? transport;
}

const CARRIERS: Record<string, string> = { twilio: 'Twilio', telnyx: 'Telnyx', plivo: 'Plivo', vonage: 'Vonage', sip: 'SIP' };

export interface PhoneCallLabel {
  carrier: string;
  direction: 'Inbound' | 'Outbound' | null;
  /** ↙ a call that came in, ↗ one placed; a phone when the server did not say which way. */
  icon: string;
  /** The numbers as the session says them (masked in the list), or null when it has none. */
  from: string | null;
  to: string | null;
}

/** How a phone call reads in the list and the view: which carrier, which way, between which numbers. Null for other sessions. */
export function phoneCall(session: Pick<SessionView, 'transport' | 'from' | 'to' | 'direction'>): PhoneCallLabel | null {
  const isCall = (session.transport !== null && session.transport in CARRIERS) || (session.direction ?? null) !== null;
  if (!isCall) return null;
  const direction = session.direction === 'inbound' ? 'Inbound' : session.direction === 'outbound' ? 'Outbound' : null;
  return {
    carrier: transportLabel(session.transport),
    direction,
    icon: direction === 'Inbound' ? '↙' : direction === 'Outbound' ? '↗' : '☎',
    from: session.from ?? null,
    to: session.to ?? null,
  };
}

export function modeLabel(mode: string): string {
  return mode === 'flow' ? 'Flow' : mode === 'assistant' ? 'Assistant' : mode;
}

/** Seconds talked: the record's duration once ended, the time since it started while live. */
export function sessionSeconds(session: SessionView, nowMs: number): number | null {
  if (session.duration_secs !== null) return session.duration_secs;
  if (session.status === 'connected' && session.started_at !== null) return Math.max(0, nowMs / 1000 - session.started_at);
  return null;
}

export function sessionTotals(sessions: readonly SessionView[], nowMs: number): { count: number; seconds: number; cents: number } {
  let seconds = 0;
  let cents = 0;
  for (const session of sessions) {
    seconds += sessionSeconds(session, nowMs) ?? 0;
    cents += session.credits_charged_usd_cents;
  }
  return { count: sessions.length, seconds, cents };
}

/** A call's analysed success in words (docs/api.md#outcome-and-success); '—' when there is none (not analysed, or no criteria). */
export function successLabel(success: boolean | 'unknown' | null | undefined): string {
  return success === true ? 'Succeeded' : success === false ? 'Did not succeed' : success === 'unknown' ? 'Unknown' : '—';
}

/** A call's analysed outcome in a line (`booked: true, slot: 7pm`); null when there is none. Unknown fields read `?`. */
export function outcomeLabel(outcome: Record<string, string | number | boolean | null> | null | undefined): string | null {
  if (!outcome) return null;
  const fields = Object.entries(outcome);
  return fields.length === 0 ? null : fields.map(([field, value]) => `${field}: ${value === null ? '?' : String(value)}`).join(', ');
}
