// Webhook endpoints and their durable outbox (docs/api.md). An endpoint's signing secret is stored
// sealed (the caller seals it); a delivery row is one event for one endpoint, written before any
// attempt, and its id is the event's `webhook-id` across every retry. Attempts are kept so the
// deliveries list can say what each one met.
import { newId } from '../ids.ts';

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface Webhook {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  /** The `whsec_` secret, sealed with the server's secret key (SecretBox); never stored plain. */
  secretEnc: string;
  createdAt: number;
}

export interface NewWebhook {
  /** Made by the caller, since the sealed secret is bound to it. */
  id: string;
  accountId: string;
  url: string;
  events: readonly string[];
  secretEnc: string;
}

export interface WebhookAttempt {
  attempt: number;
  /** Unix seconds. */
  at: number;
  /** The receiver's HTTP status; null when there was no answer (refused, timed out). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookDelivery {
  /** The `webhook-id` header: the same on every attempt. */
  id: string;
  webhookId: string;
  accountId: string;
  sessionId: string | null;
  eventType: string;
  /** The exact body sent. */
  payload: string;
  createdAt: number;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  deliveredAt: number | null;
}

export type NewWebhookDelivery = Pick<WebhookDelivery, 'id' | 'webhookId' | 'accountId' | 'sessionId' | 'eventType' | 'payload' | 'createdAt'>;

export interface AttemptOutcome {
  attempt: Omit<WebhookAttempt, 'attempt'>;
  status: WebhookDeliveryStatus;
  /** When to try again (status pending); null otherwise. */
  nextAttemptAt: number | null;
}

/**
 * What the dispatcher is not taking now (docs/api.md#webhooks): endpoints at their limit or
 * paused, accounts at their share. Their due deliveries are left out of due(), so they never fill
 * the batch ahead of others'; they stay pending and due.
 */
export interface DueExcept {
  webhooks?: readonly string[];
  accounts?: readonly string[];
}

export interface WebhooksRepository {
  create(input: NewWebhook): Promise<Webhook>;
  /** Newest first; deleted endpoints are left out. */
  listByAccount(accountId: string): Promise<Webhook[]>;
  /** Null when unknown, deleted, or another account's. */
  find(accountId: string, id: string): Promise<Webhook | null>;
  /** The live endpoints of an account that take an event type. */
  subscribers(accountId: string, eventType: string): Promise<Webhook[]>;
  /** Deletes the endpoint; its pending deliveries are given up. False when it was not there. */
  remove(accountId: string, id: string): Promise<boolean>;
  /** Puts deliveries in the outbox, due at once, in one durable write. */
  enqueue(deliveries: readonly NewWebhookDelivery[]): Promise<void>;
  /** Pending deliveries due by `now`, soonest first, of live endpoints, but none of `except`'s. */
  due(now: number, limit: number, except?: DueExcept): Promise<WebhookDelivery[]>;
  /** When the next pending delivery falls due; null when none is pending. */
  nextDueAt(): Promise<number | null>;
  /** Deliveries pending (neither delivered nor given up), counted up to `bound`: the outbox's depth. */
  pendingCount(bound: number): Promise<number>;
  /** Records one attempt and what follows from it, in one durable write. */
  recordAttempt(deliveryId: string, outcome: AttemptOutcome): Promise<void>;
  /** An endpoint's deliveries, newest first, each with its attempts, oldest first. */
  listDeliveries(webhookId: string, limit: number): Promise<Array<WebhookDelivery & { attemptLog: WebhookAttempt[] }>>;
  /** Makes a delivery due now (whatever its status); false when it is not this endpoint's. */
  retryNow(webhookId: string, deliveryId: string, now: number): Promise<boolean>;
  /** Forgets deliveries (and their attempts) created before `cutoff` that are no longer pending. */
  purgeBefore(cutoff: number, limit: number): Promise<number>;
  /**
   * Sessions that ended after `since` for which an endpoint that existed then takes
   * `session.ended`, but no such delivery was written (the server died between a session's end
   * and its outbox write).
   */
  missingEnds(since: number, limit: number): Promise<string[]>;
}

/** A new id for an endpoint, made before its secret is sealed to it. */
export const newWebhookId = newId;
