// The webhooks tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.
import type { WebhookDeliveryStatus, Webhook } from '../repositories/webhooks.ts';

export interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  events: string;
  secret_enc: string;
  created_at: number;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  account_id: string;
  session_id: string | null;
  event_type: string;
  payload: string;
  created_at: number;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  delivered_at: number | null;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export function toWebhook(row: WebhookRow): Webhook {
  return { id: row.id, accountId: row.account_id, url: row.url, events: JSON.parse(row.events) as string[], secretEnc: row.secret_enc, createdAt: row.created_at };
}
