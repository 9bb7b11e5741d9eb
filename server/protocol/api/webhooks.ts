// What the webhook endpoints answer: endpoints (the signing secret once, at creation) and their
// deliveries with every attempt.
import { z } from 'zod';
import { UnixSeconds } from './accounts.ts';

export const WebhookEventType = z.enum(['session.started', 'session.state_changed', 'session.tool_called', 'session.ended', 'call.status', 'session.analyzed']);
export const WebhookView = z.object({ id: z.string(), url: z.string(), events: z.array(WebhookEventType), created_at: UnixSeconds });
/** The signing secret (`whsec_…`) comes only in the answer to the create. */
export const CreatedWebhook = WebhookView.extend({ secret: z.string() });
export const WebhookAttemptView = z.object({ attempt: z.number(), at: UnixSeconds, status_code: z.number().nullable(), error: z.string().nullable(), duration_ms: z.number() });
export const WebhookDeliveryView = z.object({
  /** The webhook-id header: the same on every attempt. */
  id: z.string(),
  event_type: WebhookEventType,
  session_id: z.string().nullable(),
  /** pending (waiting for its next attempt), delivered, or failed (given up). */
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number(),
  created_at: UnixSeconds,
  next_attempt_at: UnixSeconds.nullable(),
  last_attempt_at: UnixSeconds.nullable(),
  delivered_at: UnixSeconds.nullable(),
  /**
   * A pending delivery of an endpoint paused after failing again and again: when the pause ends
   * on the node that answered and one probe goes; null otherwise.
   */
  endpoint_paused_until: UnixSeconds.nullable(),
  attempt_log: z.array(WebhookAttemptView),
});
/** "Retry now" answers with the delivery; one that vanished meanwhile (pruned) only with its id. */
export const RetriedDelivery = z.union([WebhookDeliveryView, z.object({ id: z.string(), status: z.literal('pending') })]);
