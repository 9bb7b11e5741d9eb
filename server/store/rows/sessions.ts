// The sessions tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.
import type { CallDirection, CallStatus, NewSession, SessionStatus, SessionMode, SessionTransport, JsonObject, Session, NewConnectedSession } from '../repositories/sessions.ts';
import { newId } from '../ids.ts';

export interface SessionRow {
  id: string;
  account_id: string;
  flow_id: string | null;
  token_hash: string | null;
  token_prefix: string | null;
  transport: string;
  mode: string;
  context_json: string;
  metadata_json: string;
  status: string;
  created_at: number;
  expires_at: number;
  started_at: number | null;
  ended_at: number | null;
  duration_secs: number | null;
  end_reason: string | null;
  credits_charged_cents: number;
  record: number;
  recording_file: string | null;
  timeline_events: number;
  timeline_bytes: number;
  timeline_dropped: number;
  flow_version: number | null;
  flow_draft: number;
  node_id: string | null;
  direction: string | null;
  from_number: string | null;
  to_number: string | null;
  carrier_call_id: string | null;
  call_status: string | null;
  transferred_to: string | null;
  answered_by: string | null;
  experiment_id: string | null;
  experiment_arm: number | null;
}

/** The columns a new session is inserted with, in order: one list for both stores' INSERT. */
export const INSERT_COLUMNS = [
  'id', 'account_id', 'flow_id', 'token_hash', 'token_prefix', 'transport', 'mode', 'context_json', 'metadata_json',
  'status', 'created_at', 'expires_at', 'started_at', 'api_key_id', 'record', 'flow_version', 'flow_draft', 'node_id',
  'direction', 'from_number', 'to_number', 'carrier_call_id', 'call_status', 'experiment_id', 'experiment_arm',
] as const;

/** A new session's values in INSERT_COLUMNS' order. */
export function insertValues(session: Session, apiKeyId: string | null, nodeId: string | null): Array<string | number | null> {
  return [
    session.id,
    session.accountId,
    session.flowId,
    session.tokenHash,
    session.tokenPrefix,
    session.transport,
    session.mode,
    JSON.stringify(session.context),
    JSON.stringify(session.metadata),
    session.status,
    session.createdAt,
    session.expiresAt,
    session.startedAt,
    apiKeyId,
    session.record ? 1 : 0,
    session.flowVersion,
    session.flowDraft ? 1 : 0,
    nodeId,
    session.direction,
    session.fromNumber,
    session.toNumber,
    session.carrierCallId,
    session.callStatus,
    session.experimentId,
    session.experimentArm,
  ];
}

export function unstartedSession(
  input: NewConnectedSession & { tokenHash?: string; tokenPrefix?: string },
  now: number,
): Omit<Session, 'status' | 'expiresAt'> {
  return {
    id: newId(),
    accountId: input.accountId,
    flowId: input.flowId,
    tokenHash: input.tokenHash ?? null,
    tokenPrefix: input.tokenPrefix ?? null,
    transport: input.transport,
    mode: input.mode,
    context: input.context,
    metadata: input.metadata,
    createdAt: now,
    startedAt: null,
    endedAt: null,
    durationSecs: null,
    endReason: null,
    creditsChargedCents: 0,
    record: false,
    recordingFile: null,
    timeline: { events: 0, bytes: 0, dropped: 0 },
    flowVersion: null,
    flowDraft: false,
    direction: input.phone?.direction ?? null,
    fromNumber: input.phone?.from ?? null,
    toNumber: input.phone?.to ?? null,
    carrierCallId: input.phone?.carrierCallId ?? null,
    callStatus: input.phone?.callStatus ?? null,
    transferredTo: null,
    answeredBy: null,
    experimentId: input.experiment?.id ?? null,
    experimentArm: input.experiment?.arm ?? null,
  };
}

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    accountId: row.account_id,
    flowId: row.flow_id,
    tokenHash: row.token_hash,
    tokenPrefix: row.token_prefix,
    transport: row.transport as SessionTransport,
    mode: row.mode as SessionMode,
    context: JSON.parse(row.context_json) as JsonObject,
    metadata: JSON.parse(row.metadata_json) as JsonObject,
    status: row.status as SessionStatus,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    durationSecs: row.duration_secs,
    endReason: row.end_reason,
    creditsChargedCents: row.credits_charged_cents,
    record: row.record === 1,
    recordingFile: row.recording_file,
    timeline: { events: row.timeline_events, bytes: row.timeline_bytes, dropped: row.timeline_dropped },
    flowVersion: row.flow_version,
    flowDraft: row.flow_draft === 1,
    direction: row.direction as CallDirection | null,
    fromNumber: row.from_number,
    toNumber: row.to_number,
    carrierCallId: row.carrier_call_id,
    callStatus: row.call_status as CallStatus | null,
    transferredTo: row.transferred_to,
    answeredBy: row.answered_by === 'human' || row.answered_by === 'machine' ? row.answered_by : null,
    experimentId: row.experiment_id,
    experimentArm: row.experiment_arm === null ? null : Number(row.experiment_arm),
  };
}

/** A session made by POST /v1/sessions: a token waiting to be claimed until `expiresAt`. */
export function createdSession(input: NewSession, now: number): Session {
  return { ...unstartedSession(input, now), status: 'created', expiresAt: input.expiresAt, record: input.record ?? false };
}

/** A session connected as it is made (the engine router's): nothing to claim, so it "expires" the moment it starts. */
export function connectedSession(input: NewConnectedSession, now: number): Session {
  return {
    ...unstartedSession(input, now),
    status: 'connected',
    expiresAt: now,
    startedAt: now,
    record: input.record ?? false,
    flowVersion: input.flowVersion ?? null,
    flowDraft: input.flowDraft ?? false,
  };
}
