// Admission of a voice session, whatever the transport, in one place that owns the session
// record: which flow (from `program_id` or the session a token claimed), the account's place in
// the engine (its concurrent sessions, the server's), its providers and credit, and the stored
// record. Refusals become the API's coded errors, answered before any socket or peer connection
// exists; a record that was claimed or created but never carried a session is ended here as
// refused, with nothing charged, and its place in the engine is given back.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SessionOutput, VoiceSession } from '../engine/session.ts';
import { EngineRefusal, type EngineAdmission, type PreparedFlow } from '../engine/voice-engine.ts';
import { AppError } from '../errors.ts';
import { accountOf } from '../http/services.ts';
import { parseInput } from '../http/validation.ts';
import type { Session, SessionExperiment } from '../store/store.ts';
import { PhoneLine } from './phone/media-bridge.ts';

export const EngineQuery = z.object({
  mode: z.enum(['assistant', 'flow'], { error: 'mode must be "assistant" or "flow"' }).default('assistant'),
  program_id: z.string().min(1).max(200).optional(),
  /**
   * Record the call (docs/api.md#what-a-call-leaves-behind), as `record: true` does on POST
   * /v1/sessions.
   */
  record: z.enum(['1', 'true', '0', 'false'], { error: 'record must be 1 or 0' }).optional(),
  /** Run the flow's unpublished draft (docs/flows.md#drafts): the owner's studio tests only. */
  draft: z.enum(['1', 'true', '0', 'false'], { error: 'draft must be 1 or 0' }).optional(),
  /**
   * Put a phone line between the client and the agent: both voices go through 8 kHz G.711 μ-law
   * and back, as a phone call's do, so the studio's test-talk sounds like a call.
   */
  phone_line: z.enum(['1', 'true', '0', 'false'], { error: 'phone_line must be 1 or 0' }).optional(),
});

/**
 * A session admitted to the engine and not started yet: it holds a place among the live
 * sessions, and the transport either starts it or refuses it (which gives the place back).
 */
export interface AdmittedSession {
  readonly record: Session;
  /** simulate_tool is for the account owner's studio sessions (signed in with a JWT). */
  readonly allowSimulator: boolean;
  /** Starts the session on the transport now open. Once only. */
  start(output: SessionOutput, options?: { leaveVoicemail?: boolean }): VoiceSession;
  /**
   * The transport could not carry the session: its record ends with nothing charged and its
   * place is given back. Idempotent, and nothing once the session started (it ends itself).
   */
  refuse(reason?: string): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    admittedSession: AdmittedSession | null;
  }
}

/** Maps an engine refusal onto the API's coded errors. */
function refusalToAppError(error: unknown): unknown {
  if (!(error instanceof EngineRefusal)) return error;
  // A full or draining engine: another try soon, or on another node, may be taken.
  return error.code === 'at_capacity' ? new AppError(error.code, error.message, undefined, { 'retry-after': '1' }) : new AppError(error.code, error.message);
}

async function endUnstarted(app: FastifyInstance, record: Session, reason: string): Promise<void> {
  await app.services.store.sessions.end(record.id, { endedAt: Date.now() / 1000, reason, creditsChargedCents: 0 });
}

/** The client's audio and the agent's through a phone line (8 kHz G.711 and back), both ways. */
function overPhoneLine(output: SessionOutput): { output: SessionOutput; callerAudioLine: (pcm: Int16Array) => Int16Array } {
  const line = new PhoneLine('mulaw');
  return {
    output: {
      ...output,
      sendEvent: (event) => {
        if (event.type === 'interrupted' || event.type === 'agent_stopped_speaking') line.replyOver();
        output.sendEvent(event);
      },
      sendAudio: (frame) => output.sendAudio(line.agentFrame(frame)),
    },
    callerAudioLine: (pcm) => line.callerAudio(pcm),
  };
}

function admitted(app: FastifyInstance, record: Session, admission: EngineAdmission, allowSimulator: boolean, flow: PreparedFlow | null, phoneLine = false): AdmittedSession {
  let refused: Promise<void> | null = null;
  let started = false;
  const refuse = (reason = 'refused'): Promise<void> => {
    if (started) return Promise.resolve();
    admission.release();
    return (refused ??= endUnstarted(app, record, reason));
  };
  return {
    record,
    allowSimulator,
    start: (output, options = {}) => {
      try {
        const line = phoneLine ? overPhoneLine(output) : null;
        const request = {
          record,
          allowSimulator,
          ...(flow ? { flow: flow.document } : {}),
          ...(options.leaveVoicemail ? { leaveVoicemail: true } : {}),
          ...(line ? { callerAudioLine: line.callerAudioLine } : {}),
        };
        const session = admission.start(request, line ? line.output : output);
        started = true;
        return session;
      } catch (error) {
        refuse('error').catch((failure: unknown) => app.log.warn({ err: failure, session: record.id }, 'could not end a session that failed to start'));
        throw error;
      }
    },
    refuse,
  };
}

/**
 * A session started through POST /v1/sessions whose token was just claimed: its flow, context
 * and metadata apply. Refused (and its record ended) when the account cannot run it now.
 */
export async function admitClaimedSession(app: FastifyInstance, record: Session, options: { phoneLine?: boolean } = {}): Promise<AdmittedSession> {
  const { engine } = app.services;
  let admission: EngineAdmission | null = null;
  try {
    // The account's place and the flow are read at once (see admitEngineSession); a refusal of
    // the place comes first, as when it was checked first.
    const [place, prepared] = await Promise.allSettled([
      engine.admit(record.accountId),
      // A backend's session runs the published version, whatever the studio has in its draft.
      // An experiment's session runs the arm it was given when it was made, even if the experiment stopped since.
      record.flowId ? engine.prepareFlow(record.accountId, record.flowId, { version: record.experimentArm }) : Promise.resolve(null),
    ]);
    if (place.status === 'rejected') throw place.reason;
    admission = place.value;
    if (prepared.status === 'rejected') throw prepared.reason;
    const flow = prepared.value;
    if (flow) await app.services.store.sessions.setFlowVersion(record.id, flow.version, false);
    return admitted(app, flow ? { ...record, flowVersion: flow.version } : record, admission, false, flow, options.phoneLine);
  } catch (error) {
    admission?.release();
    await endUnstarted(app, record, 'refused');
    throw refusalToAppError(error);
  }
}

/**
 * An engine-router request (/ws, /offer): a claimed `?session_token=` session, or a new session
 * for `mode` and `program_id` on the caller's account, recorded once it is admitted.
 */
export async function admitEngineSession(app: FastifyInstance, request: FastifyRequest, transport: 'websocket' | 'webrtc'): Promise<AdmittedSession> {
  const { store, engine } = app.services;
  const query = parseInput(EngineQuery, request.query, 'query');
  const accountId = accountOf(request.principal);
  const draft = query.draft === '1' || query.draft === 'true';
  const phoneLine = query.phone_line === '1' || query.phone_line === 'true';
  if (draft && request.principal?.kind !== 'jwt') {
    throw new AppError('wrong_credential_kind', "draft=1 runs a flow's unpublished draft: only its owner's studio (signed in, a JWT) may start such a session; API keys and session tokens run the published version.");
  }
  if (request.claimedSession) return admitClaimedSession(app, request.claimedSession, { phoneLine });
  if (query.mode === 'flow' && !query.program_id) {
    throw new AppError('invalid_request', 'mode=flow needs program_id, the id of the flow to run.', [{ field: 'program_id', message: 'required when mode is flow' }]);
  }
  const flowId = query.mode === 'flow' ? query.program_id! : null;
  // The flow (with its experiment arm) and the account's place, providers and credit are read at
  // once: each store round trip waits for a free moment of this thread, which other callers'
  // offers keep busy when several come together. A refusal for the flow comes first, as if the
  // flow had been read first, and the place taken meanwhile is given back.
  const [prepared, place] = await Promise.allSettled([
    flowId ? engine.prepareFlowAndArm(accountId, flowId, { draft, callerId: null }) : Promise.resolve({ flow: null, experiment: null }),
    engine.admit(accountId),
  ]);
  if (prepared.status === 'rejected') {
    if (place.status === 'fulfilled') place.value.release();
    throw refusalToAppError(prepared.reason);
  }
  if (place.status === 'rejected') throw refusalToAppError(place.reason);
  const admission: EngineAdmission = place.value;
  const { flow, experiment }: { flow: PreparedFlow | null; experiment: SessionExperiment | null } = prepared.value;
  let record: Session;
  try {
    record = await store.sessions.createConnected({
      accountId,
      flowId,
      transport,
      mode: query.mode,
      context: {},
      metadata: {},
      record: query.record === '1' || query.record === 'true',
      flowVersion: flow?.version ?? null,
      flowDraft: flow?.draft ?? false,
      experiment,
    });
  } catch (error) {
    admission.release();
    throw error;
  }
  // The studio signs in with a JWT: its owner may drive the flow by hand.
  return admitted(app, record, admission, request.principal?.kind === 'jwt', flow, phoneLine);
}

/** Registered once, by the first transport that needs it. */
export function decorateAdmittedSession(app: FastifyInstance): void {
  if (!app.hasRequestDecorator('admittedSession')) app.decorateRequest('admittedSession', null);
}
