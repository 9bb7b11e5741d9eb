// Two nodes on one PostgreSQL both run the webhook outbox
// (docs/hosting.md#several-nodes-on-postgresql): every event reaches the business's receiver once,
// whichever node sends it, and a burst for one endpoint flows through at its two-at-a-time pace on
// both nodes (a node that has claimed more than it may start sends the rest as places free up,
// rather than holding them for a whole claim lease).
import { randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { webhookSecretContext } from '../../server/outcomes/webhooks/events.ts';
import { WebhookDispatcher } from '../../server/outcomes/webhooks/dispatcher.ts';
import { SecretBox } from '../../server/security/secret-box.ts';
import type { NewWebhookDelivery } from '../../server/store/store.ts';
import { postgresNodesForThisFile } from '../store/postgres/postgres-nodes.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const nodes = postgresNodesForThisFile();
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('delivers each of 30 events for one endpoint exactly once when both nodes run the outbox', async () => {
  const receiver: WebhookReceiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());
  const [a, b] = await nodes.twoNodes();
  // Every node is given the same secret key (docs/hosting.md, several nodes), so either can sign.
  const secrets = new SecretBox(randomBytes(32));
  const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
  const secretEnc = secrets.seal(`whsec_${randomBytes(24).toString('base64')}`, webhookSecretContext('wh1'));
  await a.webhooks.create({ id: 'wh1', accountId: account.id, url: receiver.url, events: ['session.ended'], secretEnc });

  const problems: string[] = [];
  const log = { warn: (_: unknown, message: string) => problems.push(message), error: (_: unknown, message: string) => problems.push(message) };
  const options = { retrySeconds: [1, 1, 1], timeoutMs: 5_000, concurrency: 8, perEndpoint: 2, allowPrivate: true, retentionDays: 30 };
  const dispatchers = [new WebhookDispatcher(a, secrets, log, options), new WebhookDispatcher(b, secrets, log, options)];
  cleanups.push(async () => {
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.close()));
  });

  const now = Date.now() / 1000;
  const events: NewWebhookDelivery[] = Array.from({ length: 30 }, (_, i) => ({
    id: `msg_${i}`,
    webhookId: 'wh1',
    accountId: account.id,
    sessionId: null,
    eventType: 'session.ended',
    payload: JSON.stringify({ type: 'session.ended', n: i }),
    createdAt: now,
  }));
  await a.webhooks.enqueue(events);
  for (const dispatcher of dispatchers) dispatcher.start();

  // Well under one claim lease (60 s): a node holding claims it may not start yet would stall here.
  await until('all 30 events received', () => new Set(receiver.received.map((r) => r.id)).size === 30, 15_000);
  await until('both outboxes idle', async () => (await a.webhooks.nextDueAt()) === null);
  expect(receiver.received.map((r) => r.id).sort()).toEqual(events.map((e) => e.id).sort());
  for (const request of receiver.received) expect(request.json).toEqual(JSON.parse(events.find((e) => e.id === request.id)!.payload));
  const listed = await b.webhooks.listDeliveries('wh1', 100);
  expect(listed.filter((d) => d.status !== 'delivered' || d.attemptLog.length !== 1).map((d) => d.id)).toEqual([]);
  expect(problems).toEqual([]);
});
