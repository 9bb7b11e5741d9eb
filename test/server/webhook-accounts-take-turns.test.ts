// Webhook delivery takes accounts in turns (docs/api.md#webhooks): when places free up and several
// accounts have deliveries waiting, the account served longest ago goes next, one delivery at a
// time, rather than the oldest delivery of any account; an account with a backlog does not make
// the others wait for all of it. A real store, a real receiver, the dispatcher with one place.
import { randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { webhookSecretContext } from '../../server/outcomes/webhooks/events.ts';
import { WebhookDispatcher } from '../../server/outcomes/webhooks/dispatcher.ts';
import { SecretBox } from '../../server/security/secret-box.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import type { NewWebhookDelivery } from '../../server/store/store.ts';
import { closeAfterTest, tempDataDir } from '../store/helpers.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it("serves waiting accounts in turns, not one account's backlog first", { timeout: 60_000 }, async () => {
  const receiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());
  const store = closeAfterTest(await openStore({ dataDir: await tempDataDir() }));
  const secrets = new SecretBox(randomBytes(32));
  const backlog: Record<string, number> = { A: 6, B: 2, C: 1 };
  const now = Date.now() / 1000;
  const rows: NewWebhookDelivery[] = [];
  let age = 100;
  for (const [name, count] of Object.entries(backlog)) {
    const account = await store.accounts.create({ email: `${name.toLowerCase()}@example.com`, passwordHash: 'h' });
    const webhookId = `wh_${name}`;
    const secretEnc = secrets.seal(`whsec_${randomBytes(24).toString('base64')}`, webhookSecretContext(webhookId));
    await store.webhooks.create({ id: webhookId, accountId: account.id, url: receiver.url, events: ['session.ended'], secretEnc });
    // A's are the oldest, then B's, then C's.
    for (let i = 0; i < count; i++) {
      rows.push({ id: `msg_${name}${i}`, webhookId, accountId: account.id, sessionId: null, eventType: 'session.ended', payload: JSON.stringify({ account: name, n: i }), createdAt: now - age-- });
    }
  }
  await store.webhooks.enqueue(rows);

  const problems: string[] = [];
  const log = { warn: (_: unknown, message: string) => problems.push(message), error: (_: unknown, message: string) => problems.push(message) };
  const dispatcher = new WebhookDispatcher(store, secrets, log, { retrySeconds: [1], timeoutMs: 5_000, concurrency: 1, perEndpoint: 1, perAccount: 1, allowPrivate: true, retentionDays: 30 });
  cleanups.push(() => dispatcher.close());
  dispatcher.start();

  await until('all nine delivered', () => receiver.received.length >= 9);
  // Oldest first would have been A A A A A A B B C: B and C waited for all of A's.
  expect(receiver.received.map((r) => r.json.account).join(' ')).toBe('A B C A B A A A A');
  // Each account's own deliveries still go oldest first.
  for (const name of Object.keys(backlog)) {
    expect(receiver.received.filter((r) => r.json.account === name).map((r) => r.json.n)).toEqual(Array.from({ length: backlog[name]! }, (_, i) => i));
  }
  await until('the outbox idle', async () => (await store.webhooks.nextDueAt()) === null);
  expect(problems).toEqual([]);
});

it("leaves an account's other endpoints a place while one of its endpoints hangs", { timeout: 60_000 }, async () => {
  const hung = await startWebhookReceiver();
  const healthy = await startWebhookReceiver();
  cleanups.push(() => hung.close(), () => healthy.close());
  hung.answerWith(() => 'hang');
  const store = closeAfterTest(await openStore({ dataDir: await tempDataDir() }));
  const secrets = new SecretBox(randomBytes(32));
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
  for (const [id, url] of [['wh_hung', hung.url], ['wh_fine', healthy.url]] as const) {
    await store.webhooks.create({ id, accountId: account.id, url, events: ['session.ended'], secretEnc: secrets.seal(`whsec_${randomBytes(24).toString('base64')}`, webhookSecretContext(id)) });
  }
  const now = Date.now() / 1000;
  // The hanging endpoint's three are the oldest: oldest first, they would take both of the account's places.
  await store.webhooks.enqueue(
    [...[0, 1, 2].map((n) => ['wh_hung', n] as const), ...[0, 1, 2].map((n) => ['wh_fine', n] as const)].map(([webhookId, n], i) => ({
      id: `msg_${webhookId}_${n}`,
      webhookId,
      accountId: account.id,
      sessionId: null,
      eventType: 'session.ended',
      payload: JSON.stringify({ endpoint: webhookId, n }),
      createdAt: now - 10 + i,
    })),
  );
  const log = { warn: () => undefined, error: () => undefined };
  const dispatcher = new WebhookDispatcher(store, secrets, log, { retrySeconds: [30], timeoutMs: 5_000, concurrency: 8, perEndpoint: 2, perAccount: 2, allowPrivate: true, retentionDays: 30 });
  cleanups.push(() => dispatcher.close());
  const started = Date.now();
  dispatcher.start();

  await until('the healthy endpoint’s three', () => healthy.received.length >= 3);
  // All three while the hanging endpoint's first attempt still waits out its 5 s.
  expect(healthy.received.at(-1)!.at - started).toBeLessThan(4_000);
  // Meanwhile the hanging endpoint held one place, not both (once nothing else waits it may take the second).
  expect(hung.received.filter((r) => r.at < healthy.received[2]!.at)).toHaveLength(1);
});
