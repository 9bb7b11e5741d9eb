// The carrier's callbacks for a warm transfer's person leg, on whichever node they reach:
//
//   POST /telephony/{carrier}/warm/answer?key=…       the person answered: the carrier fetches
//                                                     what to do with their call
//   POST /telephony/{carrier}/warm/status?transfer=…  the leg's progress (no answer, busy, …)
//
// Both are signed by the carrier with the account's credentials and checked like the voice
// webhook (403 otherwise, and nothing changes). The answer URL's key is single-use and
// unguessable (32 random bytes; the store keeps its digest): once the person has answered, the
// same request again finds the transfer moved on and only hears that the caller is gone. On an
// answer this node moves the caller's live call into the conference through the carrier's REST
// API, a stateless request any node can make, and records the outcome in the store, where the
// node holding the caller's stream reads it (warm-transfer.ts). Where the carrier moves a live
// call only by pointing it at a URL (Plivo), the caller's call is pointed at a sealed URL that
// serves the conference (transfer-markup.ts), and the leg is first named by the id placeCall
// returned (Plivo's request_uuid): a callback naming it so is the leg's, and its CallUUID is kept
// from then on.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { mediaBody, noBody } from '../../http/api-contract.ts';
import { digest } from '../../security/opaque-tokens.ts';
import type { WarmTransfer } from '../../store/store.ts';
import type { CallStatus, Carrier, Markup, VoiceWebhook } from '../carriers/carrier.ts';
import { carrierApiUrl } from './carrier-api.ts';
import { openCarrierCredentials } from './carrier-credentials.ts';
import { answer, parsedCall, verifiedWebhook } from './carrier-webhook.ts';
import { conferenceMarkupUrl } from './transfer-markup.ts';

/** Said to a person who answers after the caller left or the transfer was given up. */
export const CALLER_GONE_LINE = 'Sorry, the caller is no longer on the line. Goodbye.';
/** Said before the conference when the summary could not be had in time. */
export const NO_SUMMARY_LINE = 'A caller is being transferred to you.';
/** The engine writes the summary in a few seconds; the person is not kept waiting longer than this for it. */
const SUMMARY_WAIT_MS = 5_000;

const LEG_ENDED: Partial<Record<CallStatus, string>> = {
  no_answer: 'did not answer',
  busy: 'was busy',
  failed: 'could not be reached',
  completed: 'hung up before being joined',
};

export function registerWarmTransferRoutes(server: FastifyInstance, carrier: Carrier): void {
  if (!carrier.warmTransfer) return;
  const joins = carrier.warmTransfer;
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store } = app.services;
  const name = carrier.name;
  /**
   * The callback is about the leg this transfer placed. The carrier may name it by the id
   * placeCall returned until it rings (Plivo's request_uuid, sent beside its CallUUID): the
   * CallUUID is kept then, so a hang-up reaches the call itself.
   */
  const isTheLeg = async (transfer: WarmTransfer, call: VoiceWebhook): Promise<boolean> => {
    if (!transfer.legCallId || call.callId === transfer.legCallId) return true;
    if (call.placementId !== transfer.legCallId) return false;
    await store.warmTransfers.setLegCallId(transfer.id, call.callId);
    return true;
  };

  app.post(
    `/telephony/${name}/warm/answer`,
    {
      config: { auth: 'none' },
      schema: {
        description: `${name}: the person a warm transfer called answered`,
        querystring: z.object({ key: z.string().max(128) }),
        response: { 200: mediaBody('The markup for the person: the summary, then the conference', ['application/xml', 'text/xml']) },
      },
    },
    async (request, reply) => {
      const call = parsedCall(carrier, request);
      const key = request.query.key;
      const transfer = /^[A-Za-z0-9]{16,128}$/.test(key) ? await store.warmTransfers.findByAnswerKey(digest(key)) : null;
      if (!transfer || transfer.carrier !== name) return answer(reply, carrier.sayAndHangUp(CALLER_GONE_LINE));
      await verifiedWebhook(server, carrier, request, transfer.accountId);
      // Signed, with this transfer's key, but for another call: not the leg we placed.
      if (!(await isTheLeg(transfer, call))) return answer(reply, carrier.sayAndHangUp(CALLER_GONE_LINE));
      const answered = await store.warmTransfers.move(transfer.id, ['dialing'], 'answered');
      if (!answered) return answer(reply, carrier.sayAndHangUp(CALLER_GONE_LINE));

      const summary = answered.summary ?? (await summaryWhenWritten(server, answered));
      try {
        await moveCallerIn(server, carrier, answered, joins.callerJoins(answered.conference));
      } catch (error) {
        const reason = `the person answered, but the caller's call could not be moved to them: ${error instanceof Error ? error.message : String(error)}`;
        request.log.warn({ carrier: name, session: answered.sessionId, reason }, 'warm transfer: the caller was not moved');
        await store.warmTransfers.move(answered.id, ['answered'], 'failed', reason);
        return answer(reply, carrier.sayAndHangUp(CALLER_GONE_LINE));
      }
      await store.warmTransfers.move(answered.id, ['answered'], 'joined');
      return answer(reply, joins.personJoins(answered.conference, summary));
    },
  );

  app.post(
    `/telephony/${name}/warm/status`,
    {
      config: { auth: 'none' },
      schema: { description: `${name}: a warm transfer's person leg's status`, querystring: z.object({ transfer: z.string().max(64) }), response: { 204: noBody('Recorded') } },
    },
    async (request, reply) => {
      const call = parsedCall(carrier, request);
      const transfer = await store.warmTransfers.get(request.query.transfer);
      if (!transfer || transfer.carrier !== name) return reply.status(204).send();
      await verifiedWebhook(server, carrier, request, transfer.accountId);
      if (!(await isTheLeg(transfer, call))) return reply.status(204).send();
      const ended = LEG_ENDED[call.status];
      // Only a leg still ringing fails here; once answered, the answer route decides.
      if (ended) await store.warmTransfers.move(transfer.id, ['dialing'], 'failed', `${transfer.target} ${ended}`);
      return reply.status(204).send();
    },
  );
}

/** The summary the caller's node is writing: read until it is there, for a few seconds at most. */
async function summaryWhenWritten(app: FastifyInstance, transfer: WarmTransfer): Promise<string> {
  const until = performance.now() + SUMMARY_WAIT_MS;
  while (performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const current = await app.services.store.warmTransfers.get(transfer.id);
    if (current?.summary !== null && current?.summary !== undefined) return current.summary;
  }
  return NO_SUMMARY_LINE;
}

/**
 * Redirects the caller's live call into the conference, as a cold transfer redirects it to the
 * target: with the markup itself, or (Plivo) by pointing the call at a sealed URL that serves it.
 */
async function moveCallerIn(app: FastifyInstance, carrier: Carrier, transfer: WarmTransfer, markup: Markup): Promise<void> {
  const credentials = await openCarrierCredentials(app.services, transfer.accountId, carrier.name);
  const calls = credentials ? carrier.calls(credentials as never) : null;
  const options = { baseUrl: carrierApiUrl(app.services.config, carrier.name), signal: AbortSignal.timeout(12_000), timeoutMs: 5_000, retries: 1 };
  if (calls?.redirect) return calls.redirect(transfer.callerCallId, markup, options);
  if (calls?.redirectToUrl) return calls.redirectToUrl(transfer.callerCallId, conferenceMarkupUrl(app, carrier, transfer.sessionId, transfer.conference), options);
  throw new Error(`the account's ${carrier.name} credentials are missing`);
}
