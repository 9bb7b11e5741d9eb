// Voice sessions. Lifecycle: 'created' (token issued by POST /v1/sessions) → 'connected' (the
// token's one WebSocket connection claimed it) → 'ended'. Engine-router sessions have no token
// and start out 'connected'.
//
// An account's cap on live sessions (VOXFLOW_SESSIONS_PER_ACCOUNT) is held here, where a session
// becomes 'connected' (claim, createConnected): the count and the change are one transaction, so
// no two connects can both pass it. On PostgreSQL that counts every node's sessions (under the
// account row's lock, see ../postgres/sessions.ts); here, one process, it is the same check.
import { SessionCapReachedError } from '../errors.ts';
import type { CreditsRepository } from './credits.ts';
import type { Experiment, ExperimentsRepository } from './experiments.ts';
import type { FlowsRepository } from './flows.ts';
import type { ProviderSettings, ProvidersRepository } from './providers.ts';

export type SessionStatus = 'created' | 'connected' | 'ended';

export type SessionMode = 'assistant' | 'flow';

/** A browser or app (websocket, webrtc), or a phone call through a carrier (or SIP). */
export type SessionTransport = 'websocket' | 'webrtc' | 'twilio' | 'telnyx' | 'plivo' | 'vonage' | 'sip';

export type CallDirection = 'inbound' | 'outbound';

export const CALL_STATUSES = ['queued', 'ringing', 'answered', 'busy', 'no_answer', 'failed', 'completed'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/**
 * How far along a call a status is. Carriers' status callbacks can arrive out of order and be
 * sent again; a status only ever replaces one of a lower rank, so a late `ringing` never
 * overwrites `answered`, and the first final status (busy, no_answer, failed, completed) stays.
 */
export function callStatusRank(status: CallStatus): number {
  return status === 'queued' ? 0 : status === 'ringing' ? 1 : status === 'answered' ? 2 : 3;
}

/** A phone call's side of a new session. */
export interface NewSessionPhone {
  direction: CallDirection;
  from: string;
  to: string;
  /** The carrier's id of the call; for an outbound call it is known only once placed (setCarrierCallId). */
  carrierCallId?: string | null;
  callStatus?: CallStatus | null;
}

export type JsonObject = Record<string, unknown>;

export interface Session {
  id: string;
  accountId: string;
  flowId: string | null;
  /** SHA-256 of the session token; null for engine-router sessions. */
  tokenHash: string | null;
  tokenPrefix: string | null;
  transport: SessionTransport;
  mode: SessionMode;
  context: JsonObject;
  metadata: JsonObject;
  status: SessionStatus;
  createdAt: number;
  /** An unclaimed token stops working at this time. */
  expiresAt: number;
  startedAt: number | null;
  endedAt: number | null;
  durationSecs: number | null;
  endReason: string | null;
  creditsChargedCents: number;
  /** A recording was asked for when the session started. */
  record: boolean;
  /** The recording's file name inside the data folder's recordings/, once one exists. */
  recordingFile: string | null;
  /** The stored timeline: events kept, their bytes, and events dropped over the cap. */
  timeline: { events: number; bytes: number; dropped: number };
  /** The flow version the session ran (docs/flows.md); null for a draft, no flow, or before versions. */
  flowVersion: number | null;
  /** It ran the owner's unpublished draft (a studio test). */
  flowDraft: boolean;
  /** Phone calls only (null for the others): which way, the numbers, the carrier's call id and status. */
  direction: CallDirection | null;
  fromNumber: string | null;
  toNumber: string | null;
  carrierCallId: string | null;
  callStatus: CallStatus | null;
  /** Where a transfer sent the caller (a number or a SIP address). */
  transferredTo: string | null;
  /**
   * Who answered an outbound call, when the carrier says so apart from the answer (Plivo's
   * asynchronous machine detection); null until then, and for the carriers whose verdict comes
   * with the answer.
   */
  answeredBy: 'human' | 'machine' | null;
  /** The running experiment that gave the session its arm (docs/api.md#experiments), and the arm: the version it runs. */
  experimentId: string | null;
  experimentArm: number | null;
}

/** The experiment arm a new session of a flow was given: it runs that version. */
export interface SessionExperiment {
  id: string;
  arm: number;
}

export interface NewSession {
  accountId: string;
  flowId: string | null;
  tokenHash: string;
  tokenPrefix: string;
  transport: SessionTransport;
  mode: SessionMode;
  context: JsonObject;
  metadata: JsonObject;
  expiresAt: number;
  /** The API key that asked for the session: revoking it expires the token if still unclaimed. */
  apiKeyId?: string | null;
  /** Record the call (docs/api.md#what-a-call-leaves-behind). */
  record?: boolean;
  /** A phone call: its direction, numbers and carrier call id (the transport names the carrier). */
  phone?: NewSessionPhone;
  experiment?: SessionExperiment | null;
}

export interface NewConnectedSession {
  accountId: string;
  flowId: string | null;
  transport: SessionTransport;
  mode: SessionMode;
  context: JsonObject;
  metadata: JsonObject;
  /** Record the call (docs/api.md#what-a-call-leaves-behind). */
  record?: boolean;
  /** Which flow version it runs, or that it runs the draft (docs/flows.md#drafts). */
  flowVersion?: number | null;
  flowDraft?: boolean;
  phone?: NewSessionPhone;
  experiment?: SessionExperiment | null;
}

/** Where sessions are connected: this node, and the cap it applies to each account. */
export interface SessionNode {
  /** The node id recorded on every session it claims or creates connected (repositories/nodes.ts). */
  id: string;
  /**
   * Connected sessions one account may hold at once over every node; 0 for no limit (the
   * desktop app's own server). Past it, claim and createConnected throw SessionCapReachedError
   * and change nothing: the token stays unclaimed and may be used once the account has room.
   */
  sessionsPerAccount: number;
  /** PostgreSQL: a node silent this long is gone (repositories/nodes.ts; NODE_GONE_AFTER_SECS when unset). */
  goneAfterSecs?: number;
}

export interface SessionEnd {
  endedAt: number;
  reason: string;
  creditsChargedCents: number;
  /**
   * Whole seconds the session ran, as the voice session measured it (and said in session_ended).
   * Without it (a session refused before it ran) it is counted from started_at to endedAt.
   */
  durationSecs?: number;
}

/** What GET /v1/sessions can narrow its list to; every field is optional and they all apply together. */
export interface SessionFilter {
  /** Found, case-insensitively, in one of the session's final transcript lines (caller or agent). */
  text?: string;
  flowId?: string;
  /** The flow version it ran, or 'draft' for the owner's unpublished draft. */
  version?: number | 'draft';
  /** As the list shows it: 'expired' is a token that was never used and can no longer connect. */
  status?: 'created' | 'connected' | 'ended' | 'expired';
  endReason?: string;
  /** Created at or after (Unix seconds). */
  createdFrom?: number;
  /** Created before (Unix seconds). */
  createdBefore?: number;
  /** Part of a phone call's from number (the caller's, for an inbound call). */
  fromNumber?: string;
  /** The call's analysed success (repositories/analyses.ts); sessions not analysed match none. */
  success?: 'true' | 'false' | 'unknown';
}

/** What a session start reads before it writes the session (POST /v1/sessions). */
export interface SessionStartReads {
  /** Whether the flow exists (true when no flow was named). */
  flowFound: boolean;
  /** The account's balance in cents (credits.balance). */
  balance: number;
  /** The account's provider settings (providers.get). */
  providers: ProviderSettings;
  /** The flow's running experiment (experiments.running); null when no flow was named. */
  experiment: Experiment | null;
}

/** startReads as the four repositories' own reads at once: for a store whose reads are each answered apart (sql.js keeps them beside its worker). */
export function startReadsApart(repositories: {
  flows: Pick<FlowsRepository, 'exists'>;
  credits: Pick<CreditsRepository, 'balance'>;
  providers: Pick<ProvidersRepository, 'get'>;
  experiments: Pick<ExperimentsRepository, 'running'>;
}): SessionsRepository['startReads'] {
  return async (accountId, flowId) => {
    const [flowFound, balance, providers, experiment] = await Promise.all([
      flowId === null ? true : repositories.flows.exists(accountId, flowId),
      repositories.credits.balance(accountId),
      repositories.providers.get(accountId),
      flowId === null ? null : repositories.experiments.running(accountId, flowId),
    ]);
    return { flowFound, balance, providers, experiment };
  };
}

export interface SessionsRepository {
  /**
   * What a session start reads, read at once: whether the flow exists, the balance, the provider
   * settings and the flow's running experiment (`flowId` null: no flow, so found and none). On
   * PostgreSQL one statement (with the request's API key check riding on it), where four each
   * cost the driver's work and the key's check once more.
   */
  startReads(accountId: string, flowId: string | null): Promise<SessionStartReads>;
  create(input: NewSession): Promise<Session>;
  /**
   * A session that is connected from the start (engine router: no token to claim), on this node.
   * Throws SessionCapReachedError when its account holds its cap of connected sessions.
   */
  createConnected(input: NewConnectedSession): Promise<Session>;
  findById(id: string): Promise<Session | null>;
  findByTokenHash(tokenHash: string): Promise<Session | null>;
  /**
   * Moves a 'created', unexpired session to 'connected' and returns it; null when the token is
   * unknown, expired or already used. A token is good for one connection. The session is
   * recorded on this node. Throws SessionCapReachedError (and leaves the token unclaimed) when
   * its account holds its cap of connected sessions.
   */
  claim(tokenHash: string, now: number): Promise<Session | null>;
  /** Ends the session once; ending it again returns it unchanged. Null when unknown. */
  end(id: string, end: SessionEnd): Promise<Session | null>;
  /**
   * Ends the sessions an earlier run of the server left 'connected' (it was killed or lost
   * power mid-call), with `end_reason` 'server_restarted': otherwise they would read as live
   * forever, hold a place under the account's session cap in lists, and never reach the
   * account's webhooks. A session's end is its last stored timeline event (its start when none
   * was stored); what it was charged is what the ledger holds for it. Only for a store with one
   * server process (sql.js holds the data dir's lock) this ends every connected session, and is
   * called at start only. With several nodes on one database (docs/hosting.md, PostgreSQL) it ends
   * the connected sessions of nodes that are gone (no heartbeat for NODE_GONE_AFTER_SECS, or no
   * row), and every node calls it at start and then periodically: each session is ended by one
   * of them. Returns the ids it ended.
   */
  endInterrupted(): Promise<string[]>;
  /**
   * Newest first; only those that pass `filter` when one is given (a text search reads the newest
   * TEXT_SEARCH_SESSIONS that pass the rest: rows/session-filter.ts). `now` (Unix seconds) tells
   * an expired token from a waiting one.
   */
  listRecent(accountId: string, limit?: number, filter?: SessionFilter, now?: number): Promise<Session[]>;
  /** Names the session's recording file once it exists. */
  setRecordingFile(id: string, file: string | null): Promise<void>;
  /** Which flow version a claimed session runs, known once its flow is prepared. */
  setFlowVersion(id: string, version: number | null, draft: boolean): Promise<void>;
  /** The session of a carrier's call (the transport is the carrier); null when none holds it. */
  findByCarrierCallId(carrier: SessionTransport, callId: string): Promise<Session | null>;
  /**
   * Moves a phone call's status on and returns the session (null when unknown), and whether this
   * call moved it. A status of a lower or equal rank than the stored one changes nothing
   * (callStatusRank): a final status is never replaced, and of a status delivered twice (a
   * carrier's retry, perhaps to two nodes at once) exactly one delivery moves it, so only that
   * one is told on.
   */
  setCallStatus(id: string, status: CallStatus): Promise<{ session: Session; moved: boolean } | null>;
  /**
   * An outbound call's carrier id, which arrives once the carrier took the call. Throws
   * CarrierCallTakenError when another session of the carrier holds it.
   */
  setCarrierCallId(id: string, callId: string): Promise<Session | null>;
  /** Where the caller was transferred (a number or a SIP address). */
  setTransferredTo(id: string, target: string): Promise<Session | null>;
  /**
   * The carrier's answering-machine verdict, kept once: a later or repeated one changes nothing.
   * Returns the session when this call set it, null otherwise.
   */
  setAnsweredBy(id: string, answeredBy: 'human' | 'machine'): Promise<Session | null>;
  /**
   * An account's outbound calls, for its limits: those still live (not ended, no final call
   * status, and a token not yet expired or claimed) and those placed in the 60 s before `now`.
   * On PostgreSQL this counts every node's calls, read without a lock: calls placed at the same
   * moment on several nodes may each pass a limit they reach together.
   */
  countOutbound(accountId: string, now: number): Promise<{ live: number; lastMinute: number }>;
}
