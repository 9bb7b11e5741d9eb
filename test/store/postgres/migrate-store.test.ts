// `voxflow migrate-store` (docs/hosting.md#several-nodes-on-postgresql): a data dir made by today's
// server through its API, copied into a real PostgreSQL, then served from there by a server with
// another secret key. What a user had is all there and works: signing in, the API key, the flow
// with its versions, draft and layout, the session with its timeline, the balance, the provider key
// (still readable), the account secret (still sent by the flow's http tool) and the webhook (still
// signing with the secret it was given). A second copy into the same database is refused, a wrong
// source key is reported and writes nothing, and a data dir a server is running on is refused.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrateStoreCommand } from '../../../server/migrate-command.ts';
import { openPostgresStore } from '../../../server/store/postgres/store.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { startAvailabilityService, type AvailabilityService } from '../../support/availability-service.ts';
import { sharedPostgresForThisFile } from '../../support/shared-postgres.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../../support/server.ts';
import { connectVoice, wsUrl } from '../../support/voice-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const GUESSING_GAME_TESTS = readFileSync(new URL('../../../resources/flows/guessing-game.tests.yaml', import.meta.url), 'utf8');

/** The account's secret that signs its http tools' requests (Standard Webhooks), besides the one a header names. */
const TOOL_SIGNING_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** The service heard the order with the shop's secret in its header, signed with the account's signing secret. */
function expectSignedOrder(service: AvailabilityService) {
  const request = service.received.at(-1)!;
  expect(request.headers['x-shop']).toBe('shop-42');
  const headers = { 'webhook-id': String(request.headers['webhook-id']), 'webhook-timestamp': String(request.headers['webhook-timestamp']), 'webhook-signature': String(request.headers['webhook-signature']) };
  expect(() => new Webhook(TOOL_SIGNING_SECRET).verify(request.body, headers)).not.toThrow();
}

const ordersYaml = (url: string, greeting: string) => `id: orders
version: "1.0.0"
initial_state: start
settings:
  base_system_prompt: You take food orders.
states:
  start:
    agent:
      prompt: ${greeting} Take the order; call place_order with the dish.
      tools: [place_order]
    tools:
      place_order:
        description: Place the order.
        parameters:
          day: { type: string, required: true, description: "The dish, in lower case." }
        http:
          url: ${url}
          method: PUT
          headers: { X-Shop: "shop-{secret.shop_id}" }
          store: { order_id: order.id }
    transitions:
      on_tool_result: { place_order: [done] }
  done:
    ui: { artifact_type: card, prompt: "Order {order_id}" }
    agent:
      prompt: Confirm order {order_id}.
`;

async function migrate(args: string[], env: NodeJS.ProcessEnv) {
  let stdout = '';
  let stderr = '';
  const code = await runMigrateStoreCommand(args, env, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

/** A studio call on the flow: the owner applies place_order, the http tool answers, the caller hangs up. */
async function placeOrder(server: TestServer, jwt: string, flowId: string): Promise<string> {
  const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${jwt}`));
  const started = await client.waitFor('session_started', undefined, 15_000);
  await client.waitFor('flow_state');
  client.send({ type: 'simulate_tool', name: 'place_order', arguments: { day: 'pizza' } });
  const result = await client.waitFor('tool_result', undefined, 15_000);
  expect(result, JSON.stringify(result)).toMatchObject({ name: 'place_order', ok: true });
  client.send({ type: 'end' });
  await client.waitFor('session_ended');
  await client.closed;
  return started.session_id as string;
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last seen ${JSON.stringify(value).slice(0, 1500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function countRows(url: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  } finally {
    await client.end();
  }
}

describe('voxflow migrate-store: an embedded data dir into PostgreSQL', () => {
  const postgres = sharedPostgresForThisFile();
  let service: AvailabilityService;
  let receiver: WebhookReceiver;
  const dirs: string[] = [];
  const tempDir = async (prefix: string) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    service = await startAvailabilityService({ pizza: { status: 200, json: { order: { id: 'A-17' }, next_state: 'done' } } });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('copies everything, and a server on PostgreSQL with another key serves it all', { timeout: 180_000 }, async () => {
    const dataDir = await tempDir('voxflow-migrate-src-');
    const source = await startTestServer({ dataDir, webhooks: { allowPrivate: true } });
    const ada = await createAccount(source);
    const bob = await createAccount(source);

    // A flow with two versions, a layout and a draft; a test of it; a secret, a provider key, a webhook.
    const flowId = await createFlow(source, ada.apiKey, 'Orders', ordersYaml(service.url, 'Hello.'));
    expect((await source.request('PUT', `/v1/flows/${flowId}`, { apiKey: ada.apiKey, body: { yaml_content: ordersYaml(service.url, 'Welcome.'), layout: { positions: { start: { x: 10, y: 20 } } } } })).status).toBe(200);
    expect((await source.request('PUT', `/v1/flows/${flowId}/draft`, { jwt: ada.jwt, body: { yaml_content: ordersYaml(service.url, 'Hi there.') } })).status).toBe(200);
    for (const [name, value] of [['tool_signing_secret', TOOL_SIGNING_SECRET], ['shop_id', '42']]) {
      expect((await source.request('PUT', `/v1/secrets/${name}`, { jwt: ada.jwt, body: { value } })).status).toBe(201);
    }
    expect((await source.request('PATCH', '/v1/providers', { jwt: ada.jwt, body: { llm_api_key: 'sk-own-0123456789abcd' } })).status).toBe(200);
    // A phone number on the flow, the carrier's credentials (one secret, one plain), a do-not-call entry.
    expect((await source.request('POST', '/v1/phone-numbers', { jwt: ada.jwt, body: { carrier: 'twilio', number: '+15551230001', flow_id: flowId, label: 'Orders line' } })).status).toBe(201);
    const twilio = { twilio_account_sid: `AC${'0a'.repeat(16)}`, twilio_auth_token: 'twilio-token-0123456789' };
    expect((await source.request('PATCH', '/v1/providers', { jwt: ada.jwt, body: twilio })).status).toBe(200);
    expect((await source.request('POST', '/v1/do-not-call', { jwt: ada.jwt, body: { number: '+15557654321' } })).status).toBe(201);
    const hook = await source.request('POST', '/v1/webhooks', { jwt: ada.jwt, body: { url: receiver.url } });
    expect(hook.status).toBe(201);
    const webhookSecret = hook.body.secret as string;
    // Bob's guessing game with its test suite, run once (scripted: no model).
    const gameId = await createFlow(source, bob.apiKey);
    expect((await source.request('POST', `/v1/flows/${gameId}/tests/import`, { apiKey: bob.apiKey, body: { yaml_content: GUESSING_GAME_TESTS } })).status).toBe(201);
    const run = await source.request('POST', `/v1/flows/${gameId}/tests/run`, { apiKey: bob.apiKey, body: { mode: 'scripted' } });
    expect(run.status).toBe(202);
    const runPath = `/v1/flows/${gameId}/tests/runs/${run.body.id}`;
    await until('the test run to finish', async () => (await source.request('GET', runPath, { apiKey: bob.apiKey })).body, (body) => body.status !== 'running', 60_000);

    // A call: the http tool sends the secret, the session keeps its timeline, the webhook hears its end.
    const sessionId = await placeOrder(source, ada.jwt, flowId);
    expectSignedOrder(service);
    await receiver.waitFor((r) => r.json?.type === 'session.ended' && r.json?.data?.session_id === sessionId, 20_000, 'session.ended from the source');

    const before = {
      balance: (await source.request('GET', '/v1/credits/balance', { apiKey: ada.apiKey })).body,
      versions: (await source.request('GET', `/v1/flows/${flowId}/versions`, { apiKey: ada.apiKey })).body,
      flow: (await source.request('GET', `/v1/flows/${flowId}`, { apiKey: ada.apiKey })).body,
      draft: (await source.request('GET', `/v1/flows/${flowId}/draft`, { jwt: ada.jwt })).body,
      session: (await source.request('GET', `/v1/sessions/${sessionId}`, { apiKey: ada.apiKey })).body,
      events: (await source.request('GET', `/v1/sessions/${sessionId}/events`, { apiKey: ada.apiKey })).body,
      deliveries: (await source.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { jwt: ada.jwt })).body,
      bobFlows: (await source.request('GET', '/v1/flows', { apiKey: bob.apiKey })).body,
      bobTests: (await source.request('GET', `/v1/flows/${gameId}/tests`, { apiKey: bob.apiKey })).body,
      bobRun: (await source.request('GET', runPath, { apiKey: bob.apiKey })).body,
      phoneNumbers: (await source.request('GET', '/v1/phone-numbers', { apiKey: ada.apiKey })).body,
      doNotCall: (await source.request('GET', '/v1/do-not-call', { apiKey: ada.apiKey })).body,
    };
    expect(before.versions.length ?? before.versions.versions?.length).toBeGreaterThanOrEqual(2);
    expect(before.events.events.length).toBeGreaterThan(0);
    expect(before.bobTests.length ?? before.bobTests.tests?.length).toBeGreaterThan(0);
    expect(before.bobRun.status).toBe('passed');
    await source.close();

    const targetUrl = await postgres.createDatabase('migrate_everything');
    const targetKey = randomBytes(32).toString('base64');
    const migrated = await migrate(['--from', dataDir, '--to', targetUrl], { VOXFLOW_SECRET_KEY: targetKey });
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain('Verified');
    expect(migrated.stdout).toMatch(/all 2 accounts' balances equal/);
    // Five sealed values (the LLM key, the webhook's secret, two account secrets, the Twilio auth token), each sealed again.
    expect(migrated.stdout).toContain('5 sealed values sealed again under the new key');
    expect(migrated.stdout).toMatch(/session_events\s+(\d+)\s+\1\n/);

    const target = await startTestServer({
      dataDir: await tempDir('voxflow-migrate-node-'),
      databaseUrl: targetUrl,
      secretKey: targetKey,
      jwtSecret: randomBytes(48).toString('base64'),
      webhooks: { allowPrivate: true },
    });
    try {
      // Signing in with the same password, and the same API key.
      const login = await target.request('POST', '/auth/login', { body: { email: ada.email, password: ada.password } });
      expect(login.status).toBe(200);
      const jwt = login.body.access_token as string;
      expect((await target.request('GET', `/v1/flows/${flowId}`, { apiKey: ada.apiKey })).body).toEqual(before.flow);
      expect((await target.request('GET', `/v1/flows/${flowId}/versions`, { apiKey: ada.apiKey })).body).toEqual(before.versions);
      expect((await target.request('GET', `/v1/flows/${flowId}/draft`, { jwt })).body).toEqual(before.draft);
      expect((await target.request('GET', '/v1/credits/balance', { apiKey: ada.apiKey })).body).toEqual(before.balance);
      expect((await target.request('GET', `/v1/sessions/${sessionId}`, { apiKey: ada.apiKey })).body).toEqual(before.session);
      expect((await target.request('GET', `/v1/sessions/${sessionId}/events`, { apiKey: ada.apiKey })).body).toEqual(before.events);
      expect((await target.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { jwt })).body).toEqual(before.deliveries);
      expect((await target.request('GET', '/v1/flows', { apiKey: bob.apiKey })).body).toEqual(before.bobFlows);
      expect((await target.request('GET', `/v1/flows/${gameId}/tests`, { apiKey: bob.apiKey })).body).toEqual(before.bobTests);
      expect((await target.request('GET', runPath, { apiKey: bob.apiKey })).body).toEqual(before.bobRun);
      // The provider key opens under the new key (an unreadable one would say so).
      expect((await target.request('GET', '/v1/providers', { jwt })).body.llm_api_key).toBe('sk-…abcd');
      expect((await target.request('GET', '/v1/providers', { jwt })).body).toMatchObject({ twilio_account_sid: twilio.twilio_account_sid, twilio_auth_token: 'twi…6789' });
      // The same numbers, on the new server's URLs.
      const withoutUrls = (numbers: Array<Record<string, unknown>>) => numbers.map(({ webhook_url: _w, status_url: _s, ...rest }) => rest);
      expect(withoutUrls((await target.request('GET', '/v1/phone-numbers', { apiKey: ada.apiKey })).body)).toEqual(withoutUrls(before.phoneNumbers));
      expect(before.phoneNumbers).toHaveLength(1);
      expect((await target.request('GET', '/v1/do-not-call', { apiKey: ada.apiKey })).body).toEqual(before.doNotCall);
      expect((await target.request('GET', '/v1/secrets', { jwt })).body.map((s: { name: string }) => s.name)).toEqual(['shop_id', 'tool_signing_secret']);

      // A new account's grant goes into the ledger after the copied entries (its sequence moved on).
      await createAccount(target);

      // A call on the new node: the secret still opens for the http tool, the webhook still signs with its secret.
      const heard = service.received.length;
      const second = await placeOrder(target, jwt, flowId);
      expect(service.received.length).toBe(heard + 1);
      expectSignedOrder(service);
      const ended = await receiver.waitFor((r) => r.json?.type === 'session.ended' && r.json?.data?.session_id === second, 20_000, 'session.ended from the new node');
      expect(() => new Webhook(webhookSecret).verify(ended.body, { 'webhook-id': ended.id, 'webhook-timestamp': ended.timestamp, 'webhook-signature': ended.signature })).not.toThrow();
      await until('the new session in the list', async () => (await target.request('GET', '/v1/sessions', { apiKey: ada.apiKey })).body, (list: any) => JSON.stringify(list).includes(second));
    } finally {
      await target.close();
    }

    // Into the same database again: refused, and what is there stays.
    const accounts = await countRows(targetUrl, 'accounts');
    const again = await migrate(['--from', dataDir, '--to', targetUrl], { VOXFLOW_SECRET_KEY: targetKey });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds data: accounts \(\d+ rows?\)/);
    expect(again.stderr).toContain('Nothing was written');
    expect(await countRows(targetUrl, 'accounts')).toBe(accounts);
  });

  it('says a wrong source key is wrong, and writes nothing', { timeout: 90_000 }, async () => {
    const dataDir = await tempDir('voxflow-migrate-key-');
    const source = await startTestServer({ dataDir });
    const ada = await createAccount(source);
    expect((await source.request('PUT', '/v1/secrets/shop_id', { jwt: ada.jwt, body: { value: '42' } })).status).toBe(201);
    await source.close();

    const wrongKeyFile = join(await tempDir('voxflow-migrate-wrong-'), 'old.key');
    await writeFile(wrongKeyFile, randomBytes(32).toString('base64'));
    const targetUrl = await postgres.createDatabase('migrate_wrong_key');
    const result = await migrate(['--from', dataDir, '--to', targetUrl, '--from-secret-key-file', wrongKeyFile], { VOXFLOW_SECRET_KEY: randomBytes(32).toString('base64') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('1 of 1 sealed values of the data dir do not open with the source key');
    expect(result.stderr).toContain('account_secrets.value_enc');
    expect(await countRows(targetUrl, 'accounts')).toBe(0);

    // The data dir's own key (its secret.key, the default) opens them: the same copy then works.
    const right = await migrate(['--from', dataDir, '--to', targetUrl], { VOXFLOW_SECRET_KEY: randomBytes(32).toString('base64') });
    expect(right.stderr).toBe('');
    expect(right.code).toBe(0);
    expect(await countRows(targetUrl, 'accounts')).toBe(1);
  });

  it('refuses a data dir a server is running on, a key given as a flag, and a folder with no data', { timeout: 60_000 }, async () => {
    const dataDir = await tempDir('voxflow-migrate-busy-');
    const running = await startTestServer({ dataDir });
    const targetUrl = await postgres.createDatabase('migrate_busy');
    const env = { VOXFLOW_SECRET_KEY: randomBytes(32).toString('base64') };
    try {
      const busy = await migrate(['--from', dataDir, '--to', targetUrl], env);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/is in use by another Voxflow process/);
    } finally {
      await running.close();
    }
    // Refused before the database was even opened: not even the schema is there.
    expect(await countRows(targetUrl, "pg_tables WHERE schemaname = 'public'")).toBe(0);

    const flagged = await migrate(['--from', dataDir, '--to', targetUrl, '--from-secret-key', 'c2VjcmV0'], env);
    expect(flagged.code).toBe(2);
    expect(flagged.stderr).toContain('--from-secret-key-file FILE');

    const empty = await migrate(['--from', await tempDir('voxflow-migrate-empty-'), '--to', targetUrl], env);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/holds no Voxflow data/);

    const noKey = await migrate(['--from', dataDir, '--to', targetUrl], {});
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('VOXFLOW_SECRET_KEY is required');
  });
  it('copies 100k timeline rows and 2,000 ledger entries in batches, in order, read back page for page', { timeout: 180_000 }, async () => {
    const dataDir = await tempDir('voxflow-migrate-big-');
    const store = await openStore({ dataDir, fsync: false });
    const account = await store.accounts.create({ email: 'big@example.com', passwordHash: 'h', signupCreditCents: 1_000_000 });
    const sessions: string[] = [];
    for (let s = 0; s < 20; s++) {
      const session = await store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: { s } });
      sessions.push(session.id);
      for (let from = 0; from < 5000; from += 1000) {
        const entries = Array.from({ length: 1000 }, (_, i) => ({ seq: from + i + 1, at: 1_700_000_000 + from + i, type: 'transcript', data: JSON.stringify({ type: 'transcript', text: `line ${from + i} of ${s}` }) }));
        await store.timelines.append(session.id, entries, { events: from + 1000, bytes: 0, dropped: 0 });
      }
    }
    for (let i = 0; i < 2000; i++) await store.credits.debit(account.id, 1 + (i % 7), { idempotencyKey: `session:${sessions[i % 20]}:minute:${i}`, sessionId: sessions[i % 20]! });
    const balance = await store.credits.balance(account.id);
    const firstPage = await store.timelines.page(sessions[7]!, 0, 100);
    const lastPage = await store.timelines.page(sessions[19]!, 4900, 500);
    await store.close();

    const targetUrl = await postgres.createDatabase('migrate_big');
    const key = randomBytes(32).toString('base64');
    const result = await migrate(['--from', dataDir, '--to', targetUrl], { VOXFLOW_SECRET_KEY: key });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('session_events: 100000 of 100000');
    expect(result.stdout).toMatch(/session_events\s+100000\s+100000\n/);
    expect(result.stdout).toMatch(/credit_ledger\s+2001\s+2001\n/);

    const target = await openPostgresStore({ url: targetUrl });
    try {
      expect(await target.credits.balance(account.id)).toBe(balance);
      expect(await target.timelines.page(sessions[7]!, 0, 100)).toEqual(firstPage);
      expect(await target.timelines.page(sessions[19]!, 4900, 500)).toEqual(lastPage);
      // A repeated charge is still recognised as the one already made: idempotency keys came along.
      const again = await target.credits.debit(account.id, 1, { idempotencyKey: `session:${sessions[0]}:minute:0`, sessionId: sessions[0]! });
      expect(again).toEqual({ ok: true, balance, duplicate: true });
      expect(await target.credits.balance(account.id)).toBe(balance);
    } finally {
      await target.close();
    }
  });
  it('copies the columns both schemas have by name, and refuses a database of another schema version', { timeout: 60_000 }, async () => {
    const dataDir = await tempDir('voxflow-migrate-columns-');
    const store = await openStore({ dataDir, fsync: false });
    const account = await store.accounts.create({ email: 'cols@example.com', passwordHash: 'h', signupCreditCents: 500 });
    await store.close();
    const env = { VOXFLOW_SECRET_KEY: randomBytes(32).toString('base64') };

    // A database a later Voxflow added a column to: the copy fills what the data dir has, the rest takes its default.
    const wider = await postgres.createDatabase('migrate_wider');
    const opened = await openPostgresStore({ url: wider });
    await opened.pg.run("ALTER TABLE accounts ADD COLUMN display_name TEXT NOT NULL DEFAULT 'unnamed'");
    await opened.close();
    const copied = await migrate(['--from', dataDir, '--to', wider], env);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    const client = new pg.Client({ connectionString: wider });
    await client.connect();
    try {
      expect((await client.query('SELECT id, email, display_name FROM accounts')).rows).toEqual([{ id: account.id, email: 'cols@example.com', display_name: 'unnamed' }]);
    } finally {
      await client.end();
    }

    // A database at a newer schema than this Voxflow knows: refused, untouched.
    const newer = await postgres.createDatabase('migrate_newer');
    const ahead = await openPostgresStore({ url: newer });
    await ahead.pg.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from the future', 0)");
    await ahead.close();
    const refused = await migrate(['--from', dataDir, '--to', newer], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/schema version 999, but this Voxflow knows only up to \d+/);
    expect(await countRows(newer, 'accounts')).toBe(0);
  });
});
