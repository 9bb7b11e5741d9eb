// Admission of a voice session, whatever the transport: which flow (from `program_id` or the
// session a token claimed), the account's providers and credit, and the stored session record.
// Refusals become the API's coded errors, answered before any socket or peer connection exists.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { accountOf } from '../http/services.ts';
import { parseInput } from '../http/validation.ts';
import { EngineRefusal } from '../engine/voice-engine.ts';
import type { AccountProviders } from '../providers/types.ts';
import { AppError } from '../errors.ts';
import type { Session } from '../store/store.ts';

export const EngineQuery = z.object({
  mode: z.enum(['assistant', 'flow'], { error: 'mode must be "assistant" or "flow"' }).default('assistant'),
  program_id: z.string().min(1).max(200).optional(),
});

export interface PreparedSession {
  record: Session;
  providers: AccountProviders;
  allowSimulator: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    preparedSession: PreparedSession | null;
  }
}

/** Maps an engine refusal onto the API's coded errors. */
export function refusalToAppError(error: unknown): unknown {
  if (!(error instanceof EngineRefusal)) return error;
  return new AppError(error.code === 'invalid_flow' ? 'invalid_flow' : error.code, error.message);
}

/**
 * Resolves what an engine-router request asks for into a stored, connected session: the flow
 * from `program_id` (or the claimed session's own), the account's providers, and admission.
 */
export async function prepareEngineSession(app: FastifyInstance, request: FastifyRequest, transport: 'websocket' | 'webrtc'): Promise<PreparedSession> {
  const { store, engine } = app.services;
  const query = parseInput(EngineQuery, request.query, 'query');
  const accountId = accountOf(request.principal);
  const claimed = request.claimedSession;
  try {
    if (claimed) {
      // The session was started through POST /v1/sessions: its flow, context and metadata apply.
      const providers = await engine.admit(accountId);
      if (claimed.flowId) engine.loadFlow(accountId, claimed.flowId);
      return { record: claimed, providers, allowSimulator: false };
    }
    if (query.mode === 'flow' && !query.program_id) {
      throw new AppError('invalid_request', 'mode=flow needs program_id, the id of the flow to run.', [{ field: 'program_id', message: 'required when mode is flow' }]);
    }
    const flowId = query.mode === 'flow' ? query.program_id! : null;
    if (flowId) engine.loadFlow(accountId, flowId);
    const providers = await engine.admit(accountId);
    const record = await store.sessions.createConnected({ accountId, flowId, transport, mode: query.mode, context: {}, metadata: {} });
    // The studio signs in with a JWT: its owner may drive the flow by hand.
    return { record, providers, allowSimulator: request.principal?.kind === 'jwt' };
  } catch (error) {
    if (claimed) await store.sessions.end(claimed.id, { endedAt: Date.now() / 1000, reason: 'refused', creditsChargedCents: 0 });
    throw refusalToAppError(error);
  }
}

/** Registered once, by the first transport that needs it. */
export function decoratePreparedSession(app: FastifyInstance): void {
  if (!app.hasRequestDecorator('preparedSession')) app.decorateRequest('preparedSession', null);
}
