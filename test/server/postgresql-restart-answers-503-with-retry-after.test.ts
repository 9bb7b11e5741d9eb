// A node on PostgreSQL while the database restarts, or its connections are cut: whatever a
// request cannot do for want of the database is a retryable 503 store_unavailable with
// Retry-After, never a 500, and the node serves again on its own once the database is back. The
// cluster is this file's own (the shared one must not be restarted under other files).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../api/error-shape.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { createAccount, createFlow, startTestServer, type TestResponse, type TestServer } from '../support/server.ts';

let cluster: TestPostgres;
let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let flowId: string;

beforeAll(async () => {
  cluster = await startPostgres({ durable: false });
  const databaseUrl = await cluster.createDatabase('voxflow_restart');
  server = await startTestServer({ databaseUrl, secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') });
  account = await createAccount(server);
  flowId = await createFlow(server, account.apiKey);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await cluster?.stop();
}, 60_000);

/** What a client of the API does meanwhile: reads (with an API key, looked up in the store) and writes. */
const REQUESTS: Array<() => Promise<TestResponse>> = [
  () => server.request('GET', '/v1/flows', { apiKey: account.apiKey }),
  () => server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey }),
  () => server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } }),
  () => server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { name: `renamed ${Date.now()}` } }),
  () => server.request('POST', '/auth/login', { body: { email: account.email, password: account.password } }),
];

/** Keeps every kind of request going, two at a time each, until `during` settles; every answer, in order. */
async function underRequests(during: () => Promise<void>): Promise<TestResponse[]> {
  const answers: TestResponse[] = [];
  let done = false;
  const loops = [...REQUESTS, ...REQUESTS].map(async (send) => {
    while (!done) answers.push(await send());
  });
  try {
    await during();
    // A moment more: the requests that meet the pool reconnecting.
    await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    done = true;
    await Promise.all(loops);
  }
  return answers;
}

function expectOnly2xxOr503(answers: TestResponse[]) {
  const failed = answers.filter((answer) => answer.status >= 300);
  for (const answer of failed) {
    expectError(answer, 503, 'store_unavailable');
    expect(answer.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
  }
  return failed;
}

async function servesAgain() {
  await expect.poll(async () => (await server.request('GET', '/v1/flows', { apiKey: account.apiKey })).status, { timeout: 30_000, interval: 200 }).toBe(200);
  await expect.poll(async () => (await server.request('GET', '/health')).body?.status, { timeout: 30_000, interval: 200 }).toBe('ok');
  const created = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
  expect(created.status, created.text.slice(0, 300)).toBe(200);
}

describe('requests while PostgreSQL is away', () => {
  it('during a restart every failed answer is 503 store_unavailable with Retry-After, none 500; the node serves again by itself', { timeout: 120_000 }, async () => {
    const answers = await underRequests(() => cluster.restart());
    const failed = expectOnly2xxOr503(answers);
    // The restart was felt: otherwise this test would show nothing.
    expect(failed.length, `${answers.length} answers`).toBeGreaterThan(0);
    await servesAgain();
  });

  it("when the database cuts the node's connections (pg_terminate_backend) the requests they held get 503 with Retry-After, none 500", { timeout: 120_000 }, async () => {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    try {
      const answers = await underRequests(async () => {
        for (let i = 0; i < 10; i++) {
          await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'voxflow%' AND pid <> pg_backend_pid()");
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      });
      expectOnly2xxOr503(answers);
    } finally {
      await admin.end();
    }
    await servesAgain();
  });
});
