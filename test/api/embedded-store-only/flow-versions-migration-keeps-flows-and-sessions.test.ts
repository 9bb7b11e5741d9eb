// A data dir from before versions (migrations 1–6) opened by this server (docs/flows.md#drafts):
// every flow becomes version 1, published, with no draft, and reads, runs and edits as before; a
// session token issued before the upgrade still connects, and a session that ended before it says
// no version rather than a wrong one.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newApiKey, newSessionToken } from '../../../server/security/opaque-tokens.ts';
import { MIGRATIONS } from '../../../server/store/sqljs/migrations.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { GUESSING_GAME_YAML, startTestServer, type TestServer } from '../../support/server.ts';
import { connectVoice } from '../../support/voice-client.ts';

const ONE_STATE = `id: old
version: '0.9'   # quoted with single quotes, and a comment
initial_state: hello
states:
  hello:
    agent:
      prompt: Hello from before versions.
`;

let dataDir: string;
let server: TestServer;
const old = { apiKey: '', accountId: '', gameId: 'flow-game', smallId: 'flow-small', sessionToken: '', endedSessionId: 'session-ended', updatedAt: 1_700_000_000 };

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxflow-premigration-'));
  // The schema as it was before flow versions, written the way that server wrote it.
  const store = await openStore({ dataDir, migrations: MIGRATIONS.filter((m) => m.version < 7) });
  const account = await store.accounts.create({ email: 'before@example.com', passwordHash: 'not used here', signupCreditCents: 200 });
  old.accountId = account.id;
  const key = newApiKey();
  await store.apiKeys.create({ accountId: account.id, label: 'backend', prefix: key.prefix, keyHash: key.hash });
  old.apiKey = key.key;
  const token = newSessionToken();
  old.sessionToken = token.token;
  const now = Date.now() / 1000;
  await store.db.write((tx) => {
    const flow = 'INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)';
    tx.run(flow, [old.gameId, account.id, 'Guessing game', GUESSING_GAME_YAML, old.updatedAt - 100, old.updatedAt]);
    tx.run(flow, [old.smallId, account.id, 'Small', ONE_STATE, old.updatedAt, old.updatedAt]);
    const session = `INSERT INTO sessions (id, account_id, flow_id, token_hash, token_prefix, transport, mode, context_json, metadata_json, status, created_at, expires_at, started_at, ended_at, duration_secs, end_reason)
      VALUES (?, ?, ?, ?, ?, 'websocket', 'flow', '{}', '{}', ?, ?, ?, ?, ?, ?, ?)`;
    tx.run(session, [old.endedSessionId, account.id, old.smallId, null, null, 'ended', now - 60, now - 60, now - 60, now - 30, 30, 'client_ended']);
    tx.run(session, ['session-waiting', account.id, old.smallId, token.hash, token.prefix, 'created', now, now + 600, null, null, null, null]);
  });
  await store.close();
  server = await startTestServer({ dataDir });
});

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('every existing flow is version 1, published, with no draft, its text byte for byte', async () => {
  const list = await server.request('GET', '/v1/flows', { apiKey: old.apiKey });
  expect(list.body.map((f: { id: string }) => f.id)).toEqual([old.gameId, old.smallId]);
  for (const [id, yaml, documentVersion] of [
    [old.gameId, GUESSING_GAME_YAML, '1.0.0'],
    [old.smallId, ONE_STATE, '0.9'],
  ] as const) {
    const flow = await server.request('GET', `/v1/flows/${id}`, { apiKey: old.apiKey });
    expect(flow.body).toMatchObject({ yaml_content: yaml, published_version: 1, has_draft: false, updated_at: old.updatedAt });
    const versions = await server.request('GET', `/v1/flows/${id}/versions`, { apiKey: old.apiKey });
    expect(versions.body).toEqual([{ number: 1, document_version: documentVersion, note: '', created_at: old.updatedAt, created_by: null, published: true }]);
    expect((await server.request('GET', `/v1/flows/${id}/versions/1`, { apiKey: old.apiKey })).body.yaml_content).toBe(yaml);
  }
});

it('a session token issued before the upgrade still connects, runs version 1, and says so', async () => {
  const client = await connectVoice(`${server.url.replace(/^http/, 'ws')}/v1/ws/${old.sessionToken}`);
  expect((await client.waitFor('flow_state')).state).toBe('hello');
  client.close();
  await client.closed;
  const detail = await server.request('GET', '/v1/sessions/session-waiting', { apiKey: old.apiKey });
  expect(detail.body).toMatchObject({ flow_id: old.smallId, flow_version: 1, flow_draft: false });
});

it('a session that ended before the upgrade is still listed and read, with no version claimed', async () => {
  const list = await server.request('GET', '/v1/sessions', { apiKey: old.apiKey });
  expect(list.body.map((s: { id: string }) => s.id)).toContain(old.endedSessionId);
  const detail = await server.request('GET', `/v1/sessions/${old.endedSessionId}`, { apiKey: old.apiKey });
  expect(detail.body).toMatchObject({ status: 'ended', end_reason: 'client_ended', flow_version: null, flow_draft: false });
});

it('a migrated flow edits on as before: the next save is version 2', async () => {
  const put = await server.request('PUT', `/v1/flows/${old.smallId}`, { apiKey: old.apiKey, body: { yaml_content: ONE_STATE.replace("'0.9'", "'1.0'") } });
  expect(put.status).toBe(200);
  expect(put.body.published_version).toBe(2);
  const versions = await server.request('GET', `/v1/flows/${old.smallId}/versions`, { apiKey: old.apiKey });
  expect(versions.body.map((v: { number: number; document_version: string }) => [v.number, v.document_version])).toEqual([
    [2, '1.0'],
    [1, '0.9'],
  ]);
});
