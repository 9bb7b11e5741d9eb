// What one session produced (docs/api.md#what-a-call-leaves-behind), composed from its stored
// timeline: the path through the flow, the transcript, the tool calls, the variables as they ended,
// per-turn metrics.
//
// A timeline holds up to 5,000 events (2 MiB); it is read and parsed a page at a time, yielding
// to the event loop between pages, so a big one never holds the thread that paces audio for
// more than a page's worth (~500 events, about a millisecond or two of JSON).
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { ServerEvent, ServerEventOf, TurnMetrics } from '../protocol/events.ts';
import type { Session, Store } from '../store/store.ts';
import { TIMELINE_CAP } from './timeline.ts';

const PAGE = 500;

export interface SessionOutcome {
  variables: Record<string, unknown>;
  path: Array<{ state: string; at: number }>;
  transcript: Array<{ role: 'user' | 'agent'; text: string; at: number; interrupted: boolean }>;
  tool_calls: Array<Omit<ServerEventOf<'tool_call'>, 'type'> & { at: number }>;
  /**
   * The answers of the flow's http tools (docs/flows.md#extended-flow-keys): what came back, or why
   * nothing did.
   */
  tool_results: Array<Omit<ServerEventOf<'tool_result'>, 'type'> & { at: number }>;
  metrics: Array<TurnMetrics & { at: number }>;
  errors: Array<{ code: string; message: string; fatal: boolean; at: number }>;
}

/** Reads a session's whole timeline and folds it into its outcome. */
export async function sessionOutcome(store: Store, sessionId: string): Promise<SessionOutcome> {
  const outcome: SessionOutcome = { variables: {}, path: [], transcript: [], tool_calls: [], tool_results: [], metrics: [], errors: [] };
  for (let after = 0; ; ) {
    const page = await store.timelines.page(sessionId, after, PAGE);
    for (const entry of page) fold(outcome, JSON.parse(entry.data) as ServerEvent, entry.at);
    if (page.length < PAGE) return outcome;
    after = page[page.length - 1]!.seq;
    await yieldToLoop();
  }
}

function fold(outcome: SessionOutcome, event: ServerEvent, at: number): void {
  switch (event.type) {
    case 'flow_state':
      outcome.variables = event.variables;
      if (outcome.path.at(-1)?.state !== event.state) outcome.path.push({ state: event.state, at });
      return;
    case 'transcript':
      if (event.final) outcome.transcript.push({ role: event.role, text: event.text, at, interrupted: event.interrupted === true });
      return;
    case 'tool_call': {
      const { type: _type, ...call } = event;
      outcome.tool_calls.push({ ...call, at });
      return;
    }
    case 'tool_result': {
      const { type: _type, ...answer } = event;
      outcome.tool_results.push({ ...answer, at });
      return;
    }
    case 'metrics': {
      const { type: _type, ...metrics } = event;
      outcome.metrics.push({ ...metrics, at });
      return;
    }
    case 'error':
      outcome.errors.push({ code: event.code, message: event.message, fatal: event.fatal, at });
      return;
    default:
  }
}

/** The timeline's size against its cap, as the session record says it. */
export function timelineSummary(session: Session) {
  return {
    events: session.timeline.events,
    bytes: session.timeline.bytes,
    dropped_events: session.timeline.dropped,
    cap: { events: TIMELINE_CAP.events, bytes: TIMELINE_CAP.bytes },
  };
}

/**
 * A session as the API shows it. An unclaimed token past its expiry (or whose API key was
 * revoked) reads `expired`: the stored status stays `created`, since expiry is a matter of time.
 */
export function sessionListItem(session: Session, nowSecs = Date.now() / 1000) {
  const expired = session.status === 'created' && session.expiresAt <= nowSecs;
  return {
    id: session.id,
    token_prefix: session.tokenPrefix,
    flow_id: session.flowId,
    mode: session.mode,
    transport: session.transport,
    status: expired ? 'expired' : session.status,
    created_at: session.createdAt,
    expires_at: session.status === 'created' ? session.expiresAt : null,
    started_at: session.startedAt,
    ended_at: session.endedAt,
    duration_secs: session.durationSecs,
    end_reason: session.endReason,
    credits_charged_usd_cents: session.creditsChargedCents,
    // Which version of its flow it ran (docs/flows.md#drafts): null with flow_draft for the owner's
    // unpublished draft, null alone for no flow or a session from before versions were kept.
    flow_version: session.flowVersion,
    flow_draft: session.flowDraft,
  };
}

/**
 * GET /v1/sessions/{id}: the list item's fields and everything the call produced. The
 * `session.ended` webhook carries the same object, so the two never disagree.
 */
export async function sessionDetail(store: Store, session: Session, publicUrl: string) {
  const outcome = await sessionOutcome(store, session.id);
  return {
    ...sessionListItem(session),
    metadata: session.metadata,
    ...outcome,
    recording: session.recordingFile ? { url: `${publicUrl}/v1/sessions/${session.id}/recording`, format: recordingFormat(session.recordingFile) } : null,
    timeline: timelineSummary(session),
  };
}

export type SessionDetail = Awaited<ReturnType<typeof sessionDetail>>;

export function recordingFormat(file: string): string {
  return file.endsWith('.ogg') ? 'audio/ogg; codecs=opus' : 'audio/wav';
}
