// The embedded store's (sql.js) webhooks repository; its interface and types are in ../../repositories/webhooks.ts.
import type { Database } from '../database.ts';
import type { Webhook, WebhookAttempt, WebhookDelivery, WebhooksRepository } from '../../repositories/webhooks.ts';
import type { WebhookRow, DeliveryRow, AttemptRow } from '../../rows/webhooks.ts';
import { toWebhook } from '../../rows/webhooks.ts';

export function createWebhooksRepository(db: Database): WebhooksRepository {
  return {
    create({ id, accountId, url, events, secretEnc }) {
      const webhook: Webhook = { id, accountId, url, events: [...events], secretEnc, createdAt: db.now() };
      return db.write((tx) => {
        tx.run('INSERT INTO webhooks (id, account_id, url, events, secret_enc, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
          id,
          accountId,
          url,
          JSON.stringify(webhook.events),
          secretEnc,
          webhook.createdAt,
        ]);
        return webhook;
      });
    },

    async listByAccount(accountId) {
      return db
        .all<WebhookRow>('SELECT * FROM webhooks WHERE account_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, rowid DESC', [accountId])
        .map(toWebhook);
    },

    async find(accountId, id) {
      const row = db.get<WebhookRow>('SELECT * FROM webhooks WHERE id = ? AND account_id = ? AND deleted_at IS NULL', [id, accountId]);
      return row ? toWebhook(row) : null;
    },

    async subscribers(accountId, eventType) {
      // An account has a handful of endpoints: filtering their event lists here is cheaper than a join table.
      return (await this.listByAccount(accountId)).filter((webhook) => webhook.events.includes(eventType));
    },

    remove(accountId, id) {
      const now = db.now();
      return db.write((tx) => {
        const removed = tx.run('UPDATE webhooks SET deleted_at = ? WHERE id = ? AND account_id = ? AND deleted_at IS NULL', [now, id, accountId]) === 1;
        if (removed) tx.run(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE webhook_id = ? AND status = 'pending'`, [id]);
        return removed;
      });
    },

    enqueue(deliveries) {
      if (deliveries.length === 0) return Promise.resolve();
      return db.write((tx) => {
        for (const d of deliveries) {
          tx.run(
            `INSERT INTO webhook_deliveries (id, webhook_id, account_id, session_id, event_type, payload, created_at, status, attempts, next_attempt_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)`,
            [d.id, d.webhookId, d.accountId, d.sessionId, d.eventType, d.payload, d.createdAt, d.createdAt],
          );
        }
      });
    },

    async due(now, limit, except = {}) {
      const webhooks = except.webhooks ?? [];
      const accounts = except.accounts ?? [];
      const notIn = (column: string, values: readonly string[]) => (values.length === 0 ? '' : ` AND ${column} NOT IN (${values.map(() => '?').join(', ')})`);
      return db
        .all<DeliveryRow>(
          `SELECT d.* FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
           WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND w.deleted_at IS NULL${notIn('d.webhook_id', webhooks)}${notIn('d.account_id', accounts)}
           ORDER BY d.next_attempt_at, d.created_at LIMIT ?`,
          [now, ...webhooks, ...accounts, limit],
        )
        .map(toDelivery);
    },

    async pendingCount(bound) {
      const row = db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT ?)`, [bound]);
      return Number(row?.n ?? 0);
    },

    async nextDueAt() {
      const row = db.get<{ at: number | null }>(`SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`);
      return row?.at ?? null;
    },

    recordAttempt(deliveryId, { attempt, status, nextAttemptAt }) {
      return db.write((tx) => {
        const row = tx.get<{ attempts: number }>('SELECT attempts FROM webhook_deliveries WHERE id = ?', [deliveryId]);
        if (!row) return;
        const number = row.attempts + 1;
        tx.run('INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)', [
          deliveryId,
          number,
          attempt.at,
          attempt.statusCode,
          attempt.error,
          Math.round(attempt.durationMs),
        ]);
        tx.run(
          `UPDATE webhook_deliveries SET attempts = ?, status = ?, next_attempt_at = ?, last_attempt_at = ?,
             delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END
           WHERE id = ?`,
          [number, status, nextAttemptAt, attempt.at, status, attempt.at, deliveryId],
        );
      });
    },

    async listDeliveries(webhookId, limit) {
      const rows = db.all<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?', [webhookId, limit]);
      if (rows.length === 0) return [];
      const attempts = db.all<AttemptRow>(
        `SELECT * FROM webhook_attempts WHERE delivery_id IN (${rows.map(() => '?').join(', ')}) ORDER BY delivery_id, attempt`,
        rows.map((row) => row.id),
      );
      const byDelivery = new Map<string, WebhookAttempt[]>();
      for (const a of attempts) {
        const list = byDelivery.get(a.delivery_id) ?? [];
        list.push({ attempt: a.attempt, at: a.at, statusCode: a.status_code, error: a.error, durationMs: a.duration_ms });
        byDelivery.set(a.delivery_id, list);
      }
      return rows.map((row) => ({ ...toDelivery(row), attemptLog: byDelivery.get(row.id) ?? [] }));
    },

    retryNow(webhookId, deliveryId, now) {
      return db.write(
        (tx) =>
          tx.run(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ? WHERE id = ? AND webhook_id = ?`, [now, deliveryId, webhookId]) === 1,
      );
    },

    purgeBefore(cutoff, limit) {
      return db.write((tx) => {
        const old = tx.all<{ id: string }>(`SELECT id FROM webhook_deliveries WHERE created_at < ? AND status != 'pending' LIMIT ?`, [cutoff, limit]);
        for (const { id } of old) {
          tx.run('DELETE FROM webhook_attempts WHERE delivery_id = ?', [id]);
          tx.run('DELETE FROM webhook_deliveries WHERE id = ?', [id]);
        }
        return old.length;
      });
    },

    async missingEnds(since, limit) {
      return db
        .all<{ id: string }>(
          `SELECT DISTINCT s.id FROM sessions s
           JOIN webhooks w ON w.account_id = s.account_id AND w.deleted_at IS NULL AND w.created_at <= s.ended_at
           WHERE s.status = 'ended' AND s.ended_at > ? AND w.events LIKE '%"session.ended"%'
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.session_id = s.id AND d.event_type = 'session.ended')
           ORDER BY s.ended_at LIMIT ?`,
          [since, limit],
        )
        .map((row) => row.id);
    },
  };
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    accountId: row.account_id,
    sessionId: row.session_id,
    eventType: row.event_type,
    payload: row.payload,
    createdAt: row.created_at,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    deliveredAt: row.delivered_at,
  };
}
