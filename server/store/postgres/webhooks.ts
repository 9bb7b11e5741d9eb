// Webhook endpoints and their outbox on PostgreSQL (docs/api.md, docs/hosting.md): the same promises as the
// sql.js repository (server/store/repositories/webhooks.ts), with one difference that several
// nodes need: due() CLAIMS what it returns.
//
// Every node runs the outbox dispatcher. due() picks pending deliveries with
// `FOR UPDATE SKIP LOCKED` and, in the same statement, moves their next attempt time a lease
// (DELIVERY_LEASE_SECONDS) past `now`: a second node asking at the same moment skips the rows
// being claimed and, once the claim is committed, finds them not due. So two nodes never send one
// event at once. The node that claimed a delivery writes its outcome with recordAttempt() (which
// sets the real next time); a node that dies or shuts down mid-delivery writes nothing, and the
// delivery falls due again when the lease runs out, for whichever node looks first, under the
// same webhook-id (at least once, as on one node). A delivery's returned nextAttemptAt is the
// time it fell due, as sql.js returns it, not the lease.
//
// A node's own claims come back to it. The dispatcher asks for more than it starts (it keeps to
// its concurrency and to two attempts per endpoint) and, on sql.js, skips what it already has in
// flight; were everything it was handed held for the whole lease, four events for one endpoint
// would see two sent and two wait a minute. So this repository remembers what it claimed and has
// recorded no attempt for, and each due() renews those leases and hands them out again (the
// dispatcher skips the ones in flight, as on sql.js), soonest first with the newly due. Renewal
// also keeps a slow attempt's delivery from being taken by another node while this one is alive.
// The lease is read against each node's own clock: nodes' clocks must agree to well within it.
import type { Webhook, WebhookAttempt, WebhookDelivery, WebhooksRepository } from '../repositories/webhooks.ts';
import type { PgDatabase } from './database.ts';
import type { WebhookRow, DeliveryRow, AttemptRow } from '../rows/webhooks.ts';
import { toWebhook } from '../rows/webhooks.ts';

/** How long a claimed delivery is held for the node that claimed it (longer than any attempt's timeout). */
export const DELIVERY_LEASE_SECONDS = 60;

/** A claimed delivery: its row, the time it fell due, and the end of the lease just taken. */
type ClaimedRow = DeliveryRow & { due_at: number; lease_until: number };

const WEBHOOK_COLUMNS = 'id, account_id, url, events, secret_enc, created_at';
const DELIVERY_COLUMNS = 'id, webhook_id, account_id, session_id, event_type, payload, created_at, status, attempts, next_attempt_at, last_attempt_at, delivered_at';
/** RETURNING of a claim: the row as it was due (`d`'s other columns) and the new lease in next_attempt_at. */
const CLAIMED_COLUMNS = [
  ...DELIVERY_COLUMNS.split(', ').filter((column) => column !== 'next_attempt_at').map((column) => `d.${column}`),
  'due_at',
  'd.next_attempt_at AS lease_until',
].join(', ');

export function createPgWebhooksRepository(db: PgDatabase): WebhooksRepository {
  /** What this node claimed and has recorded no attempt for: the time each fell due, and its lease's end. */
  const ownClaims = new Map<string, { dueAt: number; leaseUntil: number }>();

  const listByAccount = async (accountId: string): Promise<Webhook[]> => {
    const rows = await db.rows<WebhookRow>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, rowid DESC`,
      [accountId],
    );
    return rows.map(toWebhook);
  };

  return {
    async create({ id, accountId, url, events, secretEnc }) {
      const webhook: Webhook = { id, accountId, url, events: [...events], secretEnc, createdAt: db.now() };
      await db.run('INSERT INTO webhooks (id, account_id, url, events, secret_enc, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        id,
        accountId,
        url,
        JSON.stringify(webhook.events),
        secretEnc,
        webhook.createdAt,
      ]);
      return webhook;
    },

    listByAccount,

    async find(accountId, id) {
      const row = await db.row<WebhookRow>(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`, [id, accountId]);
      return row ? toWebhook(row) : null;
    },

    async subscribers(accountId, eventType) {
      // An account has a handful of endpoints: filtering their event lists here is cheaper than a join table.
      return (await listByAccount(accountId)).filter((webhook) => webhook.events.includes(eventType));
    },

    remove(accountId, id) {
      const now = db.now();
      return db.transaction(async (tx) => {
        const removed = (await tx.run('UPDATE webhooks SET deleted_at = $1 WHERE id = $2 AND account_id = $3 AND deleted_at IS NULL', [now, id, accountId])) === 1;
        if (removed) await tx.run(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE webhook_id = $1 AND status = 'pending'`, [id]);
        return removed;
      });
    },

    async enqueue(deliveries) {
      if (deliveries.length === 0) return;
      // A session's session.ended goes to an endpoint once, whichever nodes put it in the outbox:
      // the node the call ended on, and any node recovering ends missed at its start. Each such
      // session is locked for the transaction, so of two nodes the second sees the first's row.
      const ending = [...new Set(deliveries.filter((d) => d.eventType === 'session.ended' && d.sessionId).map((d) => d.sessionId!))].sort();
      // One statement for the rows: the batch is in the outbox entirely or not at all.
      await db.transaction(async (tx) => {
        if (ending.length > 0) await tx.run("SELECT pg_advisory_xact_lock(hashtext('session.ended:' || s)) FROM unnest($1::text[]) AS s", [ending]);
        await tx.run(
        `INSERT INTO webhook_deliveries (id, webhook_id, account_id, session_id, event_type, payload, created_at, status, attempts, next_attempt_at)
         SELECT id, webhook_id, account_id, session_id, event_type, payload, created_at, 'pending', 0, created_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::double precision[])
           WITH ORDINALITY AS d(id, webhook_id, account_id, session_id, event_type, payload, created_at, n)
         WHERE NOT (d.event_type = 'session.ended' AND EXISTS (
           SELECT 1 FROM webhook_deliveries x WHERE x.webhook_id = d.webhook_id AND x.session_id = d.session_id AND x.event_type = 'session.ended'))
         ORDER BY n`,
        [
          deliveries.map((d) => d.id),
          deliveries.map((d) => d.webhookId),
          deliveries.map((d) => d.accountId),
          deliveries.map((d) => d.sessionId),
          deliveries.map((d) => d.eventType),
          deliveries.map((d) => d.payload),
          deliveries.map((d) => d.createdAt),
        ],
      );
      });
    },

    async due(now, limit, except = {}) {
      const exceptWebhooks = [...(except.webhooks ?? [])];
      const exceptAccounts = [...(except.accounts ?? [])];
      // Held back by the dispatcher's limits: still claimed (renewed) by this node, not handed out now.
      const heldBack = new Set(exceptWebhooks);
      const heldAccounts = new Set(exceptAccounts);
      const wanted = (row: ClaimedRow) => !heldBack.has(row.webhook_id) && !heldAccounts.has(row.account_id);
      // This node's own claims first: renewed, and handed back to it (see the top of this file).
      for (const [id, claim] of ownClaims) if (claim.leaseUntil <= now) ownClaims.delete(id);
      const own = [...ownClaims];
      const renewed =
        own.length === 0
          ? []
          : await db.rows<ClaimedRow>(
              `UPDATE webhook_deliveries d SET next_attempt_at = $1::double precision + $2
               FROM unnest($3::text[], $4::double precision[], $5::double precision[]) AS own(id, due_at, lease_until)
               WHERE d.id = own.id AND d.next_attempt_at = own.lease_until AND d.status = 'pending'
                 AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.deleted_at IS NULL)
               RETURNING ${CLAIMED_COLUMNS}`,
              [now, DELIVERY_LEASE_SECONDS, own.map(([id]) => id), own.map(([, c]) => c.dueAt), own.map(([, c]) => c.leaseUntil)],
            );
      const renewedWanted = renewed.filter(wanted).length;
      // Then what is due and not being claimed elsewhere (nor held back here): locked, leased, in one statement.
      const fresh =
        renewedWanted >= limit
          ? []
          : await db.rows<ClaimedRow>(
              `WITH picked AS (
                 SELECT d.id, d.next_attempt_at AS due_at FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                 WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND w.deleted_at IS NULL
                   AND NOT (d.webhook_id = ANY($4::text[])) AND NOT (d.account_id = ANY($5::text[]))
                 ORDER BY d.next_attempt_at, d.created_at LIMIT $3
                 FOR UPDATE OF d SKIP LOCKED
               )
               UPDATE webhook_deliveries d SET next_attempt_at = $1::double precision + $2
               FROM picked WHERE d.id = picked.id
               RETURNING ${CLAIMED_COLUMNS}`,
              [now, DELIVERY_LEASE_SECONDS, limit - renewedWanted, exceptWebhooks, exceptAccounts],
            );
      // A claim whose attempt was recorded while these statements ran is over: handing it out
      // again would send it again (its attempt has ended, so the dispatcher no longer has it in flight).
      const kept = renewed.filter((row) => ownClaims.has(row.id));
      const keptIds = new Set(kept.map((row) => row.id));
      for (const [id] of own) if (!keptIds.has(id)) ownClaims.delete(id);
      const claimed = [...kept, ...fresh].sort((a, b) => a.due_at - b.due_at || a.created_at - b.created_at);
      for (const row of claimed) ownClaims.set(row.id, { dueAt: row.due_at, leaseUntil: row.lease_until });
      // More own claims than asked for, and those held back, stay claimed (renewed) and come back next time.
      return claimed
        .filter(wanted)
        .slice(0, limit)
        .map((row) => toDelivery({ ...row, next_attempt_at: row.due_at }));
    },

    async pendingCount(bound) {
      const row = await db.row<{ n: string }>(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT $1) AS pending`, [bound]);
      return Number(row?.n ?? 0);
    },

    async nextDueAt() {
      const row = await db.row<{ at: number | null }>(`SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'`);
      return row?.at ?? null;
    },

    async recordAttempt(deliveryId, { attempt, status, nextAttemptAt }) {
      // The outcome ends this node's claim, whatever it is.
      ownClaims.delete(deliveryId);
      await db.transaction(async (tx) => {
        const row = await tx.row<{ attempts: number }>('SELECT attempts FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [deliveryId]);
        if (!row) return;
        const number = Number(row.attempts) + 1;
        await tx.run('INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5, $6)', [
          deliveryId,
          number,
          attempt.at,
          attempt.statusCode,
          attempt.error,
          Math.round(attempt.durationMs),
        ]);
        await tx.run(
          `UPDATE webhook_deliveries SET attempts = $1, status = $2, next_attempt_at = $3, last_attempt_at = $4,
             delivered_at = CASE WHEN $2 = 'delivered' THEN $4 ELSE delivered_at END
           WHERE id = $5`,
          [number, status, nextAttemptAt, attempt.at, deliveryId],
        );
      });
    },

    async listDeliveries(webhookId, limit) {
      const rows = await db.rows<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, rowid DESC LIMIT $2`,
        [webhookId, limit],
      );
      if (rows.length === 0) return [];
      const attempts = await db.rows<AttemptRow>(
        'SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, attempt',
        [rows.map((row) => row.id)],
      );
      const byDelivery = new Map<string, WebhookAttempt[]>();
      for (const a of attempts) {
        const list = byDelivery.get(a.delivery_id) ?? [];
        list.push({ attempt: Number(a.attempt), at: a.at, statusCode: a.status_code === null ? null : Number(a.status_code), error: a.error, durationMs: Number(a.duration_ms) });
        byDelivery.set(a.delivery_id, list);
      }
      return rows.map((row) => ({ ...toDelivery(row), attemptLog: byDelivery.get(row.id) ?? [] }));
    },

    async retryNow(webhookId, deliveryId, now) {
      return (await db.run(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1 WHERE id = $2 AND webhook_id = $3`, [now, deliveryId, webhookId])) === 1;
    },

    purgeBefore(cutoff, limit) {
      return db.transaction(async (tx) => {
        // SKIP LOCKED: two nodes purging at once take different rows.
        const old = await tx.rows<{ id: string }>(
          `SELECT id FROM webhook_deliveries WHERE created_at < $1 AND status != 'pending' LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [cutoff, limit],
        );
        if (old.length === 0) return 0;
        const ids = old.map((row) => row.id);
        await tx.run('DELETE FROM webhook_attempts WHERE delivery_id = ANY($1::text[])', [ids]);
        await tx.run('DELETE FROM webhook_deliveries WHERE id = ANY($1::text[])', [ids]);
        return old.length;
      });
    },

    async missingEnds(since, limit) {
      // EXISTS rather than the sql.js store's JOIN + DISTINCT: PostgreSQL's DISTINCT cannot be
      // ordered by a column it does not select. The same sessions, in the same order.
      const rows = await db.rows<{ id: string }>(
        `SELECT s.id FROM sessions s
         WHERE s.status = 'ended' AND s.ended_at > $1
           AND EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = s.account_id AND w.deleted_at IS NULL
                         AND w.created_at <= s.ended_at AND w.events LIKE '%"session.ended"%')
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.session_id = s.id AND d.event_type = 'session.ended')
         ORDER BY s.ended_at LIMIT $2`,
        [since, limit],
      );
      return rows.map((row) => row.id);
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
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    deliveredAt: row.delivered_at,
  };
}
