// The markup of a transfer, served to a carrier that moves a live call only by pointing it at a
// URL (Plivo: "transfer the call to aleg_url", which it then fetches like an answer URL): a cold
// transfer's dial of the target, or the conference a warm transfer moves the caller into once the
// person has answered.
//
//   POST /telephony/{carrier}/transfer?session={id}&t={ticket}
//
// The ticket is the transfer itself (target and caller id, or the conference) sealed with the
// server's secret key, bound to the session, and valid for TRANSFER_TICKET_TTL_SECS: unguessable and unforgeable,
// and readable on any node that shares the key (as every node of a cluster must), so the
// carrier's fetch may land on another node than the one holding the call. The request must carry
// the carrier's signature under the account's credentials and name the very call the session
// holds; the ticket is then spent: served once on the node that served it (a ticket replayed on
// another node within its two minutes would need the account's auth token to sign it, and still
// only dials the same target for the same call).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { mediaBody } from '../../http/api-contract.ts';
import { digest } from '../../security/opaque-tokens.ts';
import type { Session } from '../../store/store.ts';
import type { Carrier, TransferRequest, WebhookRequest } from '../carriers/carrier.ts';
import { openCarrierCredentials } from './carrier-credentials.ts';

export const TRANSFER_TICKET_TTL_SECS = 120;

const TransferQuery = z.object({ session: z.string().min(1).max(64), t: z.string().min(1).max(1024) });
const Ticket = z.union([
  z.object({ to: z.string().min(1).max(256), callerId: z.string().max(64).optional(), exp: z.number() }),
  z.object({ conference: z.string().min(1).max(128), exp: z.number() }),
]);

const ticketContext = (carrier: string, sessionId: string) => `carrier-transfer:${carrier}:${sessionId}`;

/** The URL the carrier fetches the transfer's markup from; sealed for this session's call. */
export function transferMarkupUrl(app: FastifyInstance, carrier: Carrier, session: Session, request: TransferRequest): string {
  return ticketUrl(app, carrier, session.id, { to: request.to, ...(request.callerId ? { callerId: request.callerId } : {}) });
}

/** The URL a warm transfer points the caller's call at: the conference the person is joining. */
export function conferenceMarkupUrl(app: FastifyInstance, carrier: Carrier, sessionId: string, conference: string): string {
  return ticketUrl(app, carrier, sessionId, { conference });
}

function ticketUrl(app: FastifyInstance, carrier: Carrier, sessionId: string, what: { to: string; callerId?: string } | { conference: string }): string {
  const ticket = { ...what, exp: Date.now() / 1000 + TRANSFER_TICKET_TTL_SECS };
  const sealed = Buffer.from(app.services.secrets.seal(JSON.stringify(ticket), ticketContext(carrier.name, sessionId))).toString('base64url');
  return `${app.services.publicUrl()}/telephony/${carrier.name}/transfer?session=${encodeURIComponent(sessionId)}&t=${sealed}`;
}

export function registerTransferMarkup(server: FastifyInstance, carrier: Carrier): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store } = app.services;
  /** Tickets served here, until they expire: each is served once. */
  const spent = new Map<string, number>();
  const forgetExpired = (now: number) => {
    for (const [key, exp] of spent) if (exp < now) spent.delete(key);
  };

  app.post(
    `/telephony/${carrier.name}/transfer`,
    {
      config: { auth: 'none' },
      schema: {
        description: `The markup of a transfer (a cold transfer's dial, a warm transfer's conference), fetched by ${carrier.name} once asked to move a live call`,
        querystring: TransferQuery,
        response: { 200: mediaBody('The transfer markup: dial the target then hang up, or join the conference', ['application/xml', 'text/xml']) },
      },
    },
    async (request, reply) => {
      const { session: sessionId, t } = request.query;
      const refused = () => new AppError('not_found', 'No transfer waits at this address: it was served already, has expired, or never existed.');
      const session = await store.sessions.findById(sessionId);
      if (!session || session.transport !== carrier.name || !session.carrierCallId) throw refused();

      const rawBody = typeof request.body === 'string' ? request.body : '';
      const params: Record<string, string> = Object.fromEntries(new URLSearchParams(rawBody));
      const credentials = await openCarrierCredentials(app.services, session.accountId, carrier.name);
      const webhook: WebhookRequest = { url: app.services.publicUrl() + request.url, headers: request.headers, rawBody, params };
      const verdict = credentials ? carrier.verifyVoiceWebhook(webhook, credentials as never) : { ok: false as const, reason: `the account has no ${carrier.name} credentials` };
      if (!verdict.ok) {
        request.log.warn({ carrier: carrier.name, reason: verdict.reason }, 'transfer markup request refused');
        throw new AppError('carrier_signature_invalid', `The ${carrier.name} signature does not check out: ${verdict.reason}.`);
      }
      const call = carrier.parseVoiceWebhook(params);
      if (!call.ok || call.call.callId !== session.carrierCallId) throw refused();

      let ticket: z.infer<typeof Ticket>;
      try {
        ticket = Ticket.parse(JSON.parse(app.services.secrets.open(Buffer.from(t, 'base64url').toString('utf8'), ticketContext(carrier.name, session.id))));
      } catch {
        throw refused();
      }
      const now = Date.now() / 1000;
      forgetExpired(now);
      const key = digest(t);
      if (ticket.exp < now || spent.has(key)) throw refused();
      spent.set(key, ticket.exp);
      if ('conference' in ticket && !carrier.warmTransfer) throw refused();
      const markup =
        'conference' in ticket ? carrier.warmTransfer!.callerJoins(ticket.conference) : carrier.transferMarkup({ to: ticket.to, ...(ticket.callerId ? { callerId: ticket.callerId } : {}) });
      return reply.header('content-type', markup.contentType).send(markup.body);
    },
  );
}
