// What one session produced (docs/api.md#what-a-call-leaves-behind), composed from its stored
// timeline: the path through the flow, the transcript, the tool calls, the variables as they ended,
// per-turn metrics.
//
// A timeline holds up to 5,000 events (2 MiB); it is read and parsed a page at a time, yielding
// to the event loop between pages, so a big one never holds the thread that paces audio for
// more than a page's worth (~500 events, about a millisecond or two of JSON).
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { countToolCall, noAdherence, type Adherence } from '../protocol/adherence.ts';
import type { ServerEvent, ServerEventOf, TurnMetrics } from '../protocol/events.ts';
import type { Session, Store } from '../store/store.ts';
import { TIMELINE_CAP } from './timeline.ts';
import type { AnalysisResult } from './analysis.ts';

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
  /** How the model kept to the flow (protocol/adherence.ts): over the model's calls, not a designer's simulated ones. */
  adherence: Adherence;
}

/** Reads a session's whole timeline and folds it into its outcome. */
export async function sessionOutcome(store: Store, sessionId: string): Promise<SessionOutcome> {
  const outcome: SessionOutcome = {
    variables: {},
    path: [],
    transcript: [],
    tool_calls: [],
    tool_results: [],
    metrics: [],
    errors: [],
    adherence: noAdherence(),
  };
  for (let after = 0; ; ) {
    const page = await store.timelines.page(sessionId, after, PAGE);
    for (const entry of page) fold(outcome, JSON.parse(entry.data) as ServerEvent, entry.at);
    if (page.length < PAGE) return outcome;
    after = page[page.length - 1]!.seq;
    await yieldToLoop();
  }
}

const words = (text: string) => text.trim().replace(/\s+/g, ' ');

/**
 * A reply the caller barged in on is sent twice: whole, once the model had answered, then as far
 * as it was heard (`interrupted`). The transcript says what was said: the whole line becomes the
 * heard part, kept at the time the agent began it. False when no such line is there (the caller
 * cut in before the model finished: only the heard part was sent).
 */
function cutShort(transcript: SessionOutcome['transcript'], heard: string): boolean {
  const last = transcript.at(-1);
  if (!last || last.role !== 'agent' || last.interrupted || !words(last.text).startsWith(words(heard))) return false;
  last.text = heard;
  last.interrupted = true;
  return true;
}

function fold(outcome: SessionOutcome, event: ServerEvent, at: number): void {
  switch (event.type) {
    case 'flow_state':
      outcome.variables = event.variables;
      if (outcome.path.at(-1)?.state !== event.state) outcome.path.push({ state: event.state, at });
      return;
    case 'transcript':
      if (!event.final) return;
      if (event.interrupted && cutShort(outcome.transcript, event.text)) return;
      outcome.transcript.push({ role: event.role, text: event.text, at, interrupted: event.interrupted === true });
      return;
    case 'tool_call': {
      const { type: _type, ...call } = event;
      outcome.tool_calls.push({ ...call, at });
      if (event.source === 'model') countToolCall(outcome.adherence, event);
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
    experiment_id: session.experimentId,
    experiment_arm: session.experimentArm,
    // A list is glanced at by more people than a call's detail: its numbers are masked there.
    from: maskPhoneNumber(session.fromNumber),
    to: maskPhoneNumber(session.toNumber),
    direction: session.direction,
  };
}

/** ITU country codes of one and two digits (E.164); every other one has three. */
const ONE_DIGIT_COUNTRY = /^[17]/;
const TWO_DIGIT_COUNTRY = /^(?:2[07]|3[0-469]|4[013-9]|5[1-8]|6[0-6]|8[1246]|9[0-58])/;

/**
 * "+1555•••4567": a number's country code and the next three digits (the region, enough to tell
 * calls apart in a list) and its last four; the middle, the part that identifies a person, is
 * hidden. A number too short to hide anything that way, or a SIP address, shows its last four only.
 */
export function maskPhoneNumber(number: string | null): string | null {
  if (number === null) return null;
  const digits = /^\+(\d+)$/.exec(number)?.[1];
  if (digits) {
    const country = ONE_DIGIT_COUNTRY.test(digits) ? 1 : TWO_DIGIT_COUNTRY.test(digits) ? 2 : 3;
    const kept = country + 3;
    if (digits.length >= kept + 4 + 2) return `+${digits.slice(0, kept)}•••${digits.slice(-4)}`;
  }
  return number.length > 4 ? `•••${number.slice(-4)}` : '•••';
}

/** A phone call's side, in full (null for sessions that are not phone calls). */
export function sessionPhoneDetail(session: Session) {
  return {
    direction: session.direction,
    from: session.fromNumber,
    to: session.toNumber,
    carrier_call_id: session.carrierCallId,
    call_status: session.callStatus,
    transferred_to: session.transferredTo,
  };
}

/**
 * GET /v1/sessions/{id}: the list item's fields and everything the call produced. The
 * `session.ended` webhook carries the same object, so the two never disagree.
 */
export async function sessionDetail(store: Store, session: Session, publicUrl: string) {
  const outcome = await sessionOutcome(store, session.id);
  const analysis = await store.analyses.get(session.id);
  const analysed = analysis?.state === 'done' ? (analysis.result as { outcome: unknown; success: unknown }) : null;
  return {
    ...sessionListItem(session),
    ...sessionPhoneDetail(session),
    metadata: session.metadata,
    ...outcome,
    recording: session.recordingFile ? { url: `${publicUrl}/v1/sessions/${session.id}/recording`, format: recordingFormat(session.recordingFile) } : null,
    timeline: timelineSummary(session),
    // After the end (outcomes/analysis.ts): pending a moment after the call, then its result.
    analysis_status: analysis && analysis.state !== 'none' ? analysis.state : null,
    outcome: (analysed?.outcome ?? null) as AnalysisResult['outcome'],
    success: (analysed?.success ?? null) as AnalysisResult['success'],
  };
}

export type SessionDetail = Awaited<ReturnType<typeof sessionDetail>>;

export function recordingFormat(file: string): string {
  return file.endsWith('.ogg') ? 'audio/ogg; codecs=opus' : 'audio/wav';
}
