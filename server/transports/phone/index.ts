// Phone calls through a carrier (Twilio, Telnyx, Plivo): the same routes for each, one shape.
//
//   POST /telephony/{carrier}/voice          the carrier's voice webhook: a call rang one of an
//                                            account's numbers, or an outbound call was answered
//   WS   /telephony/{carrier}/stream/{token} the call's bidirectional media stream
//   POST /telephony/{carrier}/status         the carrier's progress callbacks
//   POST /telephony/{carrier}/warm/…         a warm transfer's person leg (warm-transfer-routes.ts)
//   POST /v1/calls                           an outbound call, placed from a backend (API key)
//
// A call is a session like any other: the voice webhook checks the carrier's signature with the
// account's own credentials for that carrier, finds the number's flow (its published version:
// drafts never take real calls), checks the first minute is paid for, stores the session with a
// single-use token and answers with the carrier's markup that opens the media stream to
// /stream/{token}. The node that receives the stream claims the token exactly as a WebSocket
// session's token is claimed (once, on any node sharing the store), so with several nodes the
// carrier's webhook and its stream may land on different nodes; what follows the stream (hang-up,
// transfer) goes through the carrier's REST API from the node holding the call. Nothing is
// charged until the engine session starts on the stream.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { EngineRefusal } from '../../engine/voice-engine.ts';
import { AppError } from '../../errors.ts';
import { mediaBody, noBody } from '../../http/api-contract.ts';
import { accountOf } from '../../http/services.ts';
import { PlacedCall } from '../../protocol/api/phone.ts';
import { digest, newSessionToken } from '../../security/opaque-tokens.ts';
import type { CallStatus, Session } from '../../store/store.ts';
import type { Carrier, CarrierName, Markup, VoiceWebhook } from '../carriers/carrier.ts';
import { CARRIERS } from '../carriers/index.ts';
import { carrierApiUrl } from './carrier-api.ts';
import { answer, parsedCall, verifiedWebhook } from './carrier-webhook.ts';
import { openCarrierCredentials } from './carrier-credentials.ts';
import { runPhoneStream } from './phone-stream.ts';
import { registerTransferMarkup } from './transfer-markup.ts';
import { endUnstreamed, machineVerdict, VOICEMAIL_LISTEN, VOICEMAIL_NOW, VOICEMAIL_PARAMETER } from './voicemail.ts';
import { registerWarmTransferRoutes } from './warm-transfer-routes.ts';

/** An unclaimed stream token of an inbound call dies this soon: the carrier opens the stream at once. */
export const INBOUND_STREAM_TOKEN_TTL_SECS = 30;
/** An outbound call's token waits for the callee to answer (ringing, then answering-machine detection). */
export const OUTBOUND_STREAM_TOKEN_TTL_SECS = 180;

/** Said (by the carrier's own voice) to a caller the account cannot serve now; nothing is charged. */
export const NO_CREDIT_LINE = 'Sorry, this line cannot take calls right now. Please try again later. Goodbye.';
export const NOT_RUNNING_LINE = 'Sorry, this number is not taking calls right now. Goodbye.';

const MAX_WEBHOOK_BYTES = 64 * 1024;
const FINAL_STATUSES: ReadonlySet<CallStatus> = new Set(['busy', 'no_answer', 'failed', 'completed']);

const markupResponse = { 200: mediaBody("The carrier's markup (TwiML, TeXML or Plivo XML) that answers the call", ['application/xml', 'text/xml']) };
const WebhookQuery = z.object({ session: z.string().max(64).optional(), stream: z.string().max(128).optional() });

export function streamUrl(publicUrl: string, carrier: CarrierName, token: string): string {
  return publicUrl.replace(/^http(s?):/i, 'ws$1:') + `/telephony/${carrier}/stream/${token}`;
}

export async function phoneTransport(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  // The carriers post forms; their signatures cover the bytes, so the body is kept as text.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_WEBHOOK_BYTES }, (_request, body, done) => {
    done(null, body);
  });
  for (const carrier of Object.values(CARRIERS)) {
    registerCarrier(server, carrier as Carrier);
    if (carrier.transfersByUrl) registerTransferMarkup(server, carrier as Carrier);
    registerWarmTransferRoutes(server, carrier as Carrier);
  }
  registerOutboundCalls(server);
}


function registerCarrier(server: FastifyInstance, carrier: Carrier): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, engine } = app.services;
  const name = carrier.name;

  app.post(
    `/telephony/${name}/voice`,
    { config: { auth: 'none' }, schema: { description: `${name}'s voice webhook ("A call comes in")`, querystring: WebhookQuery, response: markupResponse } },
    async (request, reply) => {
      const call = parsedCall(carrier, request);
      // An outbound call we placed, now answered: its session and token were made when it was placed.
      if (request.query.session) return answerOutbound(server, carrier, request, reply, request.query.session, request.query.stream ?? '');

      const number = await store.phoneNumbers.findByCarrierNumber(name, call.to);
      if (!number) {
        // Nothing of ours answers on this number: the carrier tells the caller so and hangs up.
        request.log.info({ carrier: name }, 'a call to a number no account holds');
        return answer(reply, carrier.notInService());
      }
      await verifiedWebhook(server, carrier, request, number.accountId);
      // The carrier sent this webhook again (a retry): the call already has its session.
      const existing = await store.sessions.findByCarrierCallId(name, call.callId);
      if (existing) return answer(reply, carrier.sayAndHangUp(NOT_RUNNING_LINE));

      const accountId = number.accountId;
      try {
        await engine.prepareFlow(accountId, number.flowId);
      } catch (error) {
        if (!(error instanceof EngineRefusal)) throw error;
        request.log.warn({ carrier: name, code: error.code }, 'a number whose flow cannot run took a call');
        return answer(reply, carrier.sayAndHangUp(NOT_RUNNING_LINE));
      }
      if (!(await engine.firstMinuteCovered(accountId)).ok) {
        await store.phoneNumbers.recordCall(number.id, Date.now() / 1000, 'failed');
        return answer(reply, carrier.sayAndHangUp(NO_CREDIT_LINE));
      }

      const experiment = await engine.experimentArm(accountId, number.flowId, call.from);
      const { token, prefix, hash } = newSessionToken();
      await store.sessions.create({
        accountId,
        flowId: number.flowId,
        experiment,
        tokenHash: hash,
        tokenPrefix: prefix,
        transport: name,
        mode: 'flow',
        context: {},
        metadata: { phone_number_id: number.id },
        expiresAt: Date.now() / 1000 + INBOUND_STREAM_TOKEN_TTL_SECS,
        phone: { direction: 'inbound', from: call.from, to: call.to, carrierCallId: call.callId, callStatus: 'answered' },
      });
      await store.phoneNumbers.recordCall(number.id, Date.now() / 1000, 'answered');
      return answer(reply, carrier.answerWithStream(streamUrl(app.services.publicUrl(), name, token), { token }));
    },
  );

  app.post(
    `/telephony/${name}/status`,
    { config: { auth: 'none' }, schema: { description: `${name}'s call status callback`, querystring: WebhookQuery, response: { 204: noBody('Recorded') } } },
    async (request, reply) => {
      const call = parsedCall(carrier, request);
      const session = request.query.session ? await store.sessions.findById(request.query.session) : await store.sessions.findByCarrierCallId(name, call.callId);
      // A call we hold no session for (a number released since, another system's call): nothing to record.
      if (!session || session.transport !== name) return reply.status(204).send();
      await verifiedWebhook(server, carrier, request, session.accountId);
      // A verdict that comes while the call runs (Plivo): kept for the node holding the stream.
      if (carrier.asyncMachineDetection && session.direction === 'outbound' && (call.answeredBy === 'machine' || call.answeredBy === 'human')) {
        await store.sessions.setAnsweredBy(session.id, call.answeredBy);
      }
      await recordCallStatus(server, session, call.status);
      return reply.status(204).send();
    },
  );

  app.get(
    `/telephony/${name}/stream/:token`,
    { websocket: true, config: { auth: 'none' }, schema: { params: z.object({ token: z.string().max(128) }), response: { 101: noBody("The call's media stream") } } },
    (socket, request) => {
      void runPhoneStream(server, carrier, socket, digest((request.params as { token: string }).token), request.log);
    },
  );
}

/**
 * An outbound call was answered: the markup opens its stream with the token made when it was
 * placed, in voicemail mode when a machine answered and the flow has a message to leave
 * (voicemail.ts), or hangs up on a machine with nothing to say and on a fax.
 */
async function answerOutbound(app: FastifyInstance, carrier: Carrier, request: FastifyRequest, reply: FastifyReply, sessionId: string, token: string) {
  let session = await app.services.store.sessions.findById(sessionId);
  if (!session || session.transport !== carrier.name || session.direction !== 'outbound') return answer(reply, carrier.notInService());
  await verifiedWebhook(app, carrier, request, session.accountId);
  if (session.status !== 'created' || !/^[A-Za-z0-9]{16,128}$/.test(token)) return answer(reply, carrier.sayAndHangUp(NOT_RUNNING_LINE));
  const call = parsedCall(carrier, request);
  // Plivo names a placed call by its RequestUUID until it is answered, then by its CallUUID,
  // which its stream and its REST calls use from now on.
  if (call.placementId && call.placementId === session.carrierCallId && call.callId !== session.carrierCallId) {
    session = (await app.services.store.sessions.setCarrierCallId(session.id, call.callId)) ?? session;
  }
  const verdict = await machineVerdict(app, carrier, session, call.answeredBy);
  if (verdict.kind === 'hang_up') {
    request.log.info({ carrier: carrier.name, session: session.id, reason: verdict.reason }, 'an outbound call met a machine: hung up');
    await endUnstreamed(app, session, verdict.reason);
    return answer(reply, carrier.hangUpMarkup());
  }
  const parameters =
    verdict.kind === 'leave_message' ? { [VOICEMAIL_PARAMETER]: VOICEMAIL_NOW } : verdict.kind === 'listen_for_machine' ? { [VOICEMAIL_PARAMETER]: VOICEMAIL_LISTEN } : undefined;
  return answer(reply, carrier.answerWithStream(streamUrl(app.services.publicUrl(), carrier.name, token), { token, ...(parameters ? { parameters } : {}) }));
}

/**
 * A call's progress: stored (never moving back), told to the account's webhooks as `call.status`,
 * and kept on its number. A call that ends before its stream ever opened (busy, no answer, a
 * failure) ends its session with that reason, charging nothing.
 */
export async function recordCallStatus(app: FastifyInstance, session: Session, status: CallStatus): Promise<void> {
  const { store } = app.services;
  const result = await store.sessions.setCallStatus(session.id, status);
  // A late or repeated callback (here or on another node): nothing new, nothing to tell.
  if (!result?.moved) return;
  const updated = result.session;
  await app.services.callStatus(updated, status);
  const numberId = typeof updated.metadata.phone_number_id === 'string' ? updated.metadata.phone_number_id : null;
  if (numberId) await store.phoneNumbers.recordCall(numberId, Date.now() / 1000, status);
  if (FINAL_STATUSES.has(status) && updated.status === 'created') {
    await store.sessions.end(updated.id, { endedAt: Date.now() / 1000, reason: status, creditsChargedCents: 0 });
  }
}

const E164 = /^\+[1-9]\d{6,14}$/;
const SIP_USER = /^\+?[0-9A-Za-z*#._-]{1,64}$/;
const EXTENSION = /^[0-9*#]{1,32}$/;
const SIP_URI = /^sip:[0-9A-Za-z*#._+-]{1,64}@[A-Za-z0-9.-]{1,200}(:\d{1,5})?$/;
const MAX_OBJECT_BYTES = 16 * 1024;
const smallObject = (what: string) =>
  z
    .record(z.string(), z.unknown(), { error: `${what} must be a JSON object` })
    .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_OBJECT_BYTES, { message: `${what} must be at most 16 KiB as JSON` });

const PlaceCallBody = z
  .object({
    flow_id: z.string().min(1).max(200),
    // A carrier number is E.164; a sip number may be an extension or a user part.
    from: z.string().trim().regex(SIP_USER, 'must be one of the account\'s numbers, in E.164 form (or a sip number as bound)'),
    // E.164 for every carrier; over SIP also an extension or a sip: URI the trunk routes.
    to: z.string().trim().max(256).refine((to) => E164.test(to) || EXTENSION.test(to) || SIP_URI.test(to), { message: 'must be in E.164 form, e.g. +15551234567 (over SIP also an extension or a sip: URI)' }),
    variables: smallObject('variables').optional(),
    metadata: smallObject('metadata').optional(),
  })
  .strict();

function registerOutboundCalls(server: FastifyInstance): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, engine, config } = app.services;

  app.post('/v1/calls', { config: { auth: 'api_key' }, schema: { body: PlaceCallBody, response: { 201: PlacedCall } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const { body } = request;
    const number = (await store.phoneNumbers.list(accountId)).find((n) => n.number === body.from && n.carrier !== 'vonage');
    if (!number) throw new AppError('phone_number_not_outbound', `${body.from} is not one of this account's carrier or sip numbers.`);
    const overSip = number.carrier === 'sip';
    if (!overSip && !E164.test(body.to)) throw new AppError('invalid_request', `to: ${body.to} must be in E.164 form, e.g. +15551234567, for a call through ${number.carrier}.`);
    const sipCalls = app.services.sipCalls;
    if (overSip && !sipCalls) throw new AppError('invalid_request', 'This server takes no SIP calls (it has no udp: listener in --sip-listen): a sip number cannot place a call here.');
    const carrier = overSip ? null : CARRIERS[number.carrier as CarrierName];
    if (await store.doNotCall.isDoNotCall(accountId, body.to)) throw new AppError('do_not_call', `${body.to} is on this account's do-not-call list: it is never called.`);

    let flow;
    try {
      flow = await engine.prepareFlow(accountId, body.flow_id);
    } catch (error) {
      if (error instanceof EngineRefusal) throw new AppError(error.code, error.message);
      throw error;
    }
    const [credit, counts] = await Promise.all([engine.firstMinuteCovered(accountId), store.sessions.countOutbound(accountId, Date.now() / 1000)]);
    if (!credit.ok) throw new AppError('insufficient_credits', credit.message);
    if (counts.live >= config.outboundCalls.concurrent) {
      reply.header('retry-after', '30');
      throw new AppError('too_many_calls', `This account has ${counts.live} outbound calls live, as many as it may (${config.outboundCalls.concurrent}); try again once one ends.`);
    }
    if (counts.lastMinute >= config.outboundCalls.perMinute) {
      reply.header('retry-after', '60');
      throw new AppError('too_many_calls', `This account placed ${counts.lastMinute} calls in the last minute, as many as it may (${config.outboundCalls.perMinute}).`);
    }
    // The caller of an outbound call is the person rung: the same person always gets the same arm.
    const experiment = await engine.experimentArm(accountId, body.flow_id, body.to);
    if (!carrier) {
      // Over SIP: the call goes out through the server's trunk at once; its answer claims the session.
      const { prefix, hash } = newSessionToken();
      const session = await store.sessions.create({
        accountId,
        flowId: body.flow_id,
        tokenHash: hash,
        tokenPrefix: prefix,
        transport: 'sip',
        mode: 'flow',
        experiment,
        context: body.variables ?? {},
        metadata: { ...(body.metadata ?? {}), phone_number_id: number.id },
        expiresAt: Date.now() / 1000 + OUTBOUND_STREAM_TOKEN_TTL_SECS,
        apiKeyId: request.principal?.kind === 'api_key' ? request.principal.apiKeyId : null,
        phone: { direction: 'outbound', from: body.from, to: body.to, carrierCallId: null, callStatus: 'queued' },
      });
      const callId = sipCalls!.place({ session, tokenHash: hash, from: body.from, to: body.to });
      const placed = (await store.sessions.setCarrierCallId(session.id, callId)) ?? session;
      await store.phoneNumbers.recordCall(number.id, Date.now() / 1000, 'queued');
      return reply.status(201).send({ session_id: placed.id, call_status: placed.callStatus ?? 'queued', carrier: 'sip', carrier_call_id: callId, from: body.from, to: body.to });
    }
    const credentials = await openCarrierCredentials(app.services, accountId, carrier.name);
    if (!credentials) throw new AppError('invalid_request', `Set this account's ${carrier.name} credentials (PATCH /v1/providers) before placing calls through it.`);

    const { token, prefix, hash } = newSessionToken();
    const session = await store.sessions.create({
      accountId,
      flowId: body.flow_id,
      tokenHash: hash,
      tokenPrefix: prefix,
      transport: carrier.name,
      mode: 'flow',
      experiment,
      context: body.variables ?? {},
      metadata: { ...(body.metadata ?? {}), phone_number_id: number.id },
      expiresAt: Date.now() / 1000 + OUTBOUND_STREAM_TOKEN_TTL_SECS,
      apiKeyId: request.principal?.kind === 'api_key' ? request.principal.apiKeyId : null,
      phone: { direction: 'outbound', from: body.from, to: body.to, carrierCallId: null, callStatus: 'queued' },
    });
    const base = app.services.publicUrl();
    let callId: string;
    try {
      ({ callId } = await carrier.calls(credentials as never).placeCall(
        {
          from: body.from,
          to: body.to,
          answerUrl: `${base}/telephony/${carrier.name}/voice?session=${session.id}&stream=${token}`,
          statusUrl: `${base}/telephony/${carrier.name}/status?session=${session.id}`,
          machineDetection: flow.document.settings?.voicemail?.detect === true,
        },
        { baseUrl: carrierApiUrl(config, carrier.name), signal: AbortSignal.timeout(30_000) },
      ));
    } catch (error) {
      request.log.warn({ err: error, carrier: carrier.name }, 'the carrier did not place a call');
      await recordCallStatus(server, session, 'failed');
      throw new AppError('carrier_unavailable', `${carrier.name} did not place the call: ${error instanceof Error ? error.message : String(error)}`);
    }
    const placed = (await store.sessions.setCarrierCallId(session.id, callId)) ?? session;
    await store.phoneNumbers.recordCall(number.id, Date.now() / 1000, 'queued');
    return reply.status(201).send({ session_id: placed.id, call_status: placed.callStatus ?? 'queued', carrier: carrier.name, carrier_call_id: callId, from: body.from, to: body.to });
  });
}
