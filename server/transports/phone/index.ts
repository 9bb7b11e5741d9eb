// Phone calls through a carrier (Twilio, Telnyx, Plivo): three routes per carrier, one shape.
//
//   POST /telephony/{carrier}/voice          the carrier's voice webhook: a call rang one of an
//                                            account's numbers (or an outbound call was answered)
//   WS   /telephony/{carrier}/stream/{token} the call's bidirectional media stream
//   POST /telephony/{carrier}/status         the carrier's progress callbacks
//
// A call is a session like any other: the voice webhook checks the carrier's signature with the
// account's own credentials for that carrier, finds the number's flow (its published version:
// drafts never take real calls), checks the first minute is paid for, stores the session with a
// single-use token and answers with the carrier's markup that opens the media stream to
// /stream/{token}. The node that receives the stream claims the token exactly as a WebSocket
// session's token is claimed (once, on any node sharing the store), so with several nodes the
// carrier's webhook and its stream may land on different nodes. Nothing is charged until the
// engine session starts on the stream.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { checkFirstMinute } from '../../billing/admission.ts';
import { effectiveRatePerMinute } from '../../billing/provider-choice.ts';
import { EngineRefusal } from '../../engine/voice-engine.ts';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { digest, newSessionToken } from '../../security/opaque-tokens.ts';
import type { Carrier, CarrierName, Markup } from '../carriers/carrier.ts';
import { CARRIERS } from '../carriers/index.ts';
import { openCarrierCredentials } from './carrier-credentials.ts';
import { runPhoneStream } from './phone-stream.ts';

/** An unclaimed stream token of an inbound call dies this soon: the carrier opens the stream at once. */
export const INBOUND_STREAM_TOKEN_TTL_SECS = 30;

/** Said (by the carrier's own voice) to a caller the account cannot serve now; nothing is charged. */
export const NO_CREDIT_LINE = 'Sorry, this line cannot take calls right now. Please try again later. Goodbye.';
export const NOT_RUNNING_LINE = 'Sorry, this number is not taking calls right now. Goodbye.';

const MAX_WEBHOOK_BYTES = 64 * 1024;

/** The URL the carrier requested, as it signed it: our public base and the path with its query. */
export function signedUrl(publicUrl: string, request: FastifyRequest): string {
  return publicUrl + request.url;
}

export function streamUrl(publicUrl: string, carrier: CarrierName, token: string): string {
  return publicUrl.replace(/^http(s?):/i, 'ws$1:') + `/telephony/${carrier}/stream/${token}`;
}

export async function phoneTransport(app: FastifyInstance): Promise<void> {
  // The carriers post forms; their signatures cover the bytes, so the body is kept as text.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_WEBHOOK_BYTES }, (_request, body, done) => {
    done(null, body);
  });
  for (const carrier of Object.values(CARRIERS)) registerCarrier(app, carrier as Carrier);
}

/** The carrier's REST API: the configured one (a regional edge, a test's fake), else the carrier's own. */
export function carrierApiUrl(config: Config, carrier: CarrierName): string | undefined {
  return carrier === 'twilio' ? config.carriers.twilioApiUrl : carrier === 'telnyx' ? config.carriers.telnyxApiUrl : config.carriers.plivoApiUrl;
}

function formParams(body: unknown): Record<string, string> {
  if (typeof body !== 'string') return {};
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) params[name] = value;
  return params;
}

function registerCarrier(app: FastifyInstance, carrier: Carrier): void {
  const { store, engine, config } = app.services;
  const name = carrier.name;

  app.post(`/telephony/${name}/voice`, { config: { auth: 'none' } }, async (request, reply) => {
    const rawBody = typeof request.body === 'string' ? request.body : '';
    const params = formParams(request.body);
    const parsed = carrier.parseVoiceWebhook(params);
    if (!parsed.ok) throw new AppError('invalid_request', `This is not a ${name} voice webhook: ${parsed.reason}.`);
    const call = parsed.call;
    const answer = (markup: Markup) => reply.header('content-type', markup.contentType).send(markup.body);

    const number = await store.phoneNumbers.findByCarrierNumber(name, call.to);
    if (!number) {
      // Nothing of ours answers on this number: the carrier tells the caller so and hangs up.
      request.log.info({ carrier: name }, 'a call to a number no account holds');
      return answer(carrier.notInService());
    }
    const credentials = await openCarrierCredentials(app.services, number.accountId, name);
    const verdict = credentials
      ? carrier.verifyVoiceWebhook({ url: signedUrl(app.services.publicUrl(), request), headers: request.headers, rawBody, params }, credentials as never)
      : { ok: false as const, reason: `the account has no ${name} credentials` };
    if (!verdict.ok) {
      request.log.warn({ carrier: name, reason: verdict.reason }, 'voice webhook refused');
      throw new AppError('webhook_signature_invalid', `The ${name} signature does not check out: ${verdict.reason}.`);
    }

    const accountId = number.accountId;
    try {
      await engine.prepareFlow(accountId, number.flowId);
    } catch (error) {
      if (!(error instanceof EngineRefusal)) throw error;
      request.log.warn({ carrier: name, code: error.code }, 'a number whose flow cannot run took a call');
      return answer(carrier.sayAndHangUp(NOT_RUNNING_LINE));
    }
    const [balance, providers] = await Promise.all([store.credits.balance(accountId), store.providers.get(accountId)]);
    if (!checkFirstMinute(balance, effectiveRatePerMinute(config, providers)).ok) {
      await store.phoneNumbers.recordCall(number.id, Date.now() / 1000, 'failed');
      return answer(carrier.sayAndHangUp(NO_CREDIT_LINE));
    }

    const { token, prefix, hash } = newSessionToken();
    await store.sessions.create({
      accountId,
      flowId: number.flowId,
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
    return answer(carrier.answerWithStream(streamUrl(app.services.publicUrl(), name, token), { token }));
  });

  app.get<{ Params: { token: string } }>(
    `/telephony/${name}/stream/:token`,
    { websocket: true, config: { auth: 'none' } },
    (socket: WebSocket, request) => {
      void runPhoneStream(app, carrier, socket, digest(request.params.token), request.log);
    },
  );
}
