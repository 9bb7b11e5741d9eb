// Webhook endpoints (docs/api.md): an account registers a URL and the session events it wants;
// the signing secret is shown once, at creation, and stored sealed. Deliveries are listed per
// endpoint with every attempt, and one can be sent again at once.
//
// Either credential (as every other /v1 endpoint does): the design named only the JWT, but
// a backend that sets up its own receiver at deploy time holds only its API key, as with Vapi's
// and Retell's server URLs; secrets are still shown only once, to whoever created the endpoint.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { WEBHOOK_EVENT_TYPES, webhookSecretContext, type WebhookEventType } from '../../outcomes/webhooks/events.ts';
import { outboundTargetCheck } from '../../security/outbound-target.ts';
import { newWebhookSecret } from '../../security/webhook-signature.ts';
import { newWebhookId, type Webhook, type WebhookAttempt, type WebhookDelivery } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { noBody } from '../../http/api-contract.ts';
import { CreatedWebhook, RetriedDelivery, WebhookDeliveryView, WebhookView } from '../../protocol/api/webhooks.ts';

/** Endpoints one account may have: enough for every environment, few enough that a fan-out stays small. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

const CreateBody = z
  .object({
    url: z
      .string({ error: 'url is required' })
      .trim()
      .max(2048, 'at most 2048 characters')
      // http:// too, as Svix and Vapi allow: receivers on a LAN or behind a TLS-terminating proxy;
      // the signature, not the scheme, is what proves the sender.
      .refine((value) => /^https?:\/\/[^/\s]+/i.test(value) && URL.canParse(value), { message: 'must be an http:// or https:// URL' })
      // A user:password in the URL would be a secret kept and shown in plain text: the signature is the credential.
      .refine((value) => !URL.canParse(value) || (new URL(value).username === '' && new URL(value).password === ''), {
        message: 'must not carry a user name or password; check the webhook-signature header instead',
      }),
    events: z
      .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `each event is one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }))
      .min(1, 'pick at least one event')
      .refine((events) => new Set(events).size === events.length, { message: 'each event once' })
      .optional(),
  })
  .strict();

const DeliveriesQuery = z.object({
  limit: z.coerce.number({ error: 'limit must be a number' }).int().min(1).max(100, 'limit is at most 100').default(50),
});

const WebhookParams = z.object({ webhook_id: z.string() });
const DeliveryParams = z.object({ webhook_id: z.string(), delivery_id: z.string() });

export interface WebhookRouteOptions {
  /** Tells the dispatcher a delivery of this endpoint was made due (retry now): a pause of the endpoint ends for it. */
  wake(webhookId: string): void;
  /** Unix seconds when the endpoint's pause on this node ends; null when it is not paused. */
  pausedUntil(webhookId: string): number | null;
}

// The store keeps event types as text; only the API's own (validated) ones are ever written.
function endpointView(webhook: Webhook) {
  return { id: webhook.id, url: webhook.url, events: webhook.events as WebhookEventType[], created_at: webhook.createdAt };
}

function attemptView(attempt: WebhookAttempt) {
  return { attempt: attempt.attempt, at: attempt.at, status_code: attempt.statusCode, error: attempt.error, duration_ms: attempt.durationMs };
}

/** `pausedUntil`: when the endpoint's pause on this node ends (a pending delivery waits for it), or null. */
function deliveryView(delivery: WebhookDelivery & { attemptLog: WebhookAttempt[] }, pausedUntil: number | null) {
  return {
    id: delivery.id,
    event_type: delivery.eventType as WebhookEventType,
    session_id: delivery.sessionId,
    status: delivery.status,
    attempts: delivery.attempts,
    created_at: delivery.createdAt,
    next_attempt_at: delivery.status === 'pending' ? delivery.nextAttemptAt : null,
    last_attempt_at: delivery.lastAttemptAt,
    delivered_at: delivery.deliveredAt,
    endpoint_paused_until: delivery.status === 'pending' ? pausedUntil : null,
    attempt_log: delivery.attemptLog.map(attemptView),
  };
}

export async function webhookRoutes(server: FastifyInstance, options: WebhookRouteOptions): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, config, secrets } = app.services;
  const auth = { auth: 'jwt_or_api_key' as const };

  const ownEndpoint = async (accountId: string, id: string): Promise<Webhook> => {
    const webhook = await store.webhooks.find(accountId, id);
    if (!webhook) throw new AppError('webhook_not_found', `No webhook endpoint with the id "${id}".`);
    return webhook;
  };

  app.post('/v1/webhooks', { config: { ...auth, carriesSecret: true }, schema: { body: CreateBody, response: { 201: CreatedWebhook } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const { body } = request;
    if ((await store.webhooks.listByAccount(accountId)).length >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new AppError('invalid_request', `An account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhook endpoints; delete one first.`);
    }
    // Checked whatever the opt-in: it allows private networks, never this host's own addresses.
    // Where private networks are allowed, a name not resolvable yet (a receiver still to come up
    // on the local network) is saved as before; every delivery checks where it connects.
    const { allowPrivate } = config.webhooks;
    const target = await outboundTargetCheck(body.url, { allowPrivate }, { unresolved: allowPrivate ? 'allow' : 'refuse' });
    if (target) throw new AppError(target.kind === 'unresolvable' ? 'webhook_host_unresolvable' : 'webhook_target_not_allowed', undefined, [{ field: 'url', message: target.problem }]);
    const id = newWebhookId();
    const secret = newWebhookSecret();
    const webhook = await store.webhooks.create({
      id,
      accountId,
      url: body.url,
      events: body.events ?? [...WEBHOOK_EVENT_TYPES],
      secretEnc: secrets.seal(secret, webhookSecretContext(id)),
    });
    return reply.status(201).send({ ...endpointView(webhook), secret });
  });

  app.get('/v1/webhooks', { config: auth, schema: { response: { 200: z.array(WebhookView) } } }, async (request) => {
    return (await store.webhooks.listByAccount(accountOf(request.principal))).map(endpointView);
  });

  app.delete('/v1/webhooks/:webhook_id', { config: auth, schema: { params: WebhookParams, response: { 204: noBody('Deleted, with its deliveries') } } }, async (request, reply) => {
    const removed = await store.webhooks.remove(accountOf(request.principal), request.params.webhook_id);
    if (!removed) throw new AppError('webhook_not_found', `No webhook endpoint with the id "${request.params.webhook_id}".`);
    return reply.status(204).send();
  });

  app.get('/v1/webhooks/:webhook_id/deliveries', { config: auth, schema: { params: WebhookParams, querystring: DeliveriesQuery, response: { 200: z.array(WebhookDeliveryView) } } }, async (request) => {
    const webhook = await ownEndpoint(accountOf(request.principal), request.params.webhook_id);
    const { limit } = request.query;
    const pausedUntil = options.pausedUntil(webhook.id);
    return (await store.webhooks.listDeliveries(webhook.id, limit)).map((delivery) => deliveryView(delivery, pausedUntil));
  });

  // "Retry now": due at once, whatever its state (a given-up delivery gets one more attempt; a
  // delivered one is sent again with its webhook-id, which a receiver that dedupes ignores).
  app.post('/v1/webhooks/:webhook_id/deliveries/:delivery_id/retry', { config: auth, schema: { params: DeliveryParams, response: { 202: RetriedDelivery } } }, async (request, reply) => {
    const webhook = await ownEndpoint(accountOf(request.principal), request.params.webhook_id);
    const made = await store.webhooks.retryNow(webhook.id, request.params.delivery_id, Date.now() / 1000);
    if (!made) throw new AppError('webhook_delivery_not_found', `No delivery "${request.params.delivery_id}" for this webhook endpoint.`);
    options.wake(webhook.id);
    const delivery = (await store.webhooks.listDeliveries(webhook.id, 100)).find((d) => d.id === request.params.delivery_id);
    return reply.status(202).send(delivery ? deliveryView(delivery, options.pausedUntil(webhook.id)) : { id: request.params.delivery_id, status: 'pending' as const });
  });
}
