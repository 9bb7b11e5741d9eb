// What a webhook says (docs/api.md#what-a-call-leaves-behind): the session events, a phone call's
// status, and their payloads. Every body is a Standard Webhooks envelope, `{type, timestamp,
// data}`, and every `data` carries the session's `metadata` as given at its start, as the spec
// asks of session hooks.
import type { HookContext, HookEvent } from '../../engine/hooks.ts';
import type { CallStatus, Session } from '../../store/store.ts';
import { sessionPhoneDetail, type SessionDetail } from '../session-detail.ts';
import type { AnalysisResult } from '../analysis.ts';

export const WEBHOOK_EVENT_TYPES = ['session.started', 'session.state_changed', 'session.tool_called', 'session.ended', 'call.status', 'session.analyzed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookEnvelope {
  type: WebhookEventType;
  /** When it happened, ISO 8601. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** The sealed secret of an endpoint is bound to its id: a copy moved to another row does not open. */
export function webhookSecretContext(webhookId: string): string {
  return `webhook:${webhookId}`;
}

/**
 * The envelope of a live session event; null for the end, which is sent once the session's
 * timeline is stored (sessionEndedEnvelope), so it can carry the whole outcome.
 */
export function hookEventEnvelope(event: HookEvent, context: HookContext): WebhookEnvelope | null {
  const timestamp = new Date(context.at * 1000).toISOString();
  const base = { session_id: context.sessionId };
  switch (event.type) {
    case 'started':
      return {
        type: 'session.started',
        timestamp,
        data: { ...base, flow_id: event.flowId, mode: event.mode, transport: event.transport, metadata: context.metadata },
      };
    case 'state_changed':
      return { type: 'session.state_changed', timestamp, data: { ...base, from_state: event.from, to_state: event.to, tool: event.tool, metadata: context.metadata } };
    case 'tool_called':
      return {
        type: 'session.tool_called',
        timestamp,
        data: {
          ...base,
          name: event.name,
          arguments: event.arguments,
          status: event.status,
          reason: event.reason,
          source: event.source,
          state: event.state,
          metadata: context.metadata,
        },
      };
    case 'ended':
      return null;
  }
}

/** session.ended: GET /v1/sessions/{id}'s body (variables, path, transcript, metadata, cost, recording), and the id again as session_id. */
export function sessionEndedEnvelope(detail: SessionDetail): WebhookEnvelope {
  const at = detail.ended_at ?? Date.now() / 1000;
  return { type: 'session.ended', timestamp: new Date(at * 1000).toISOString(), data: { session_id: detail.id, ...detail } };
}

/**
 * call.status: a phone call moved on (queued, ringing, answered, busy, no_answer, failed,
 * completed), with the call's side of the session in full, as GET /v1/sessions/{id} shows it,
 * and `status` the one this event reports (the session's may have moved on since).
 */
export function callStatusEnvelope(session: Session, status: CallStatus, at: number): WebhookEnvelope {
  return {
    type: 'call.status',
    timestamp: new Date(at * 1000).toISOString(),
    data: { session_id: session.id, flow_id: session.flowId, transport: session.transport, ...sessionPhoneDetail(session), status, metadata: session.metadata },
  };
}

/**
 * session.analyzed: what the call produced and whether it succeeded, once analysed after its end
 * (docs/api.md#outcome-and-success); `outcome` and `success` as GET /v1/sessions/{id} shows them.
 */
export function sessionAnalyzedEnvelope(session: Session, result: AnalysisResult): WebhookEnvelope {
  return {
    type: 'session.analyzed',
    timestamp: new Date(result.analyzed_at * 1000).toISOString(),
    data: {
      session_id: session.id,
      flow_id: session.flowId,
      flow_version: session.flowVersion,
      experiment_id: session.experimentId,
      experiment_arm: session.experimentArm,
      outcome: result.outcome,
      success: result.success,
      analyzed_at: result.analyzed_at,
      metadata: session.metadata,
    },
  };
}
