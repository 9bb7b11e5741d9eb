// A data dir from before sessions' moves were kept (migrations 1–17) opened by this server
// (docs/api.md#analytics): each stored session's moves are read from its kept timeline, so the
// flow's traffic counts the calls made before the upgrade (without the tools, which the
// backfill does not read back), and a new call's moves are added after them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newApiKey } from '../../../server/security/opaque-tokens.ts';
import { MIGRATIONS } from '../../../server/store/sqljs/migrations.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { GUESSING_GAME_YAML, startTestServer, type TestServer } from '../../support/server.ts';

let dataDir: string;
let server: TestServer;
const old = { apiKey: '', flowId: 'flow-old' };

const flowState = (state: string) => JSON.stringify({ type: 'flow_state', state, prompt: '', artifact_type: 'text', variables: {}, tools: [] });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxflow-pretransitions-'));
  const store = await openStore({ dataDir, migrations: MIGRATIONS.filter((m) => m.version <= 17) });
  const account = await store.accounts.create({ email: 'before-moves@example.com', passwordHash: 'not used here', signupCreditCents: 200 });
  const key = newApiKey();
  await store.apiKeys.create({ accountId: account.id, label: 'backend', prefix: key.prefix, keyHash: key.hash });
  old.apiKey = key.key;
  const now = Date.now() / 1000;
  await store.db.write((tx) => {
    tx.run('INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [old.flowId, account.id, 'Old', GUESSING_GAME_YAML, now, now]);
    tx.run('INSERT INTO flow_versions (flow_id, number, yaml_content, created_at) VALUES (?, 1, ?, ?)', [old.flowId, GUESSING_GAME_YAML, now]);
    const session = `INSERT INTO sessions (id, account_id, flow_id, transport, mode, context_json, metadata_json, status, created_at, expires_at, started_at, ended_at, duration_secs, end_reason, flow_version)
      VALUES (?, ?, ?, 'websocket', 'flow', '{}', '{}', 'ended', ?, ?, ?, ?, 30, ?, 1)`;
    const event = 'INSERT INTO session_events (session_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)';
    // a → b → a → b (the same state twice in a row is one), ended in b; and a alone, ended in a.
    tx.run(session, ['s-back-and-forth', account.id, old.flowId, now - 60, now - 60, now - 60, now - 30, 'caller_hung_up']);
    ['a', 'b', 'b', 'a', 'b'].forEach((state, i) => tx.run(event, ['s-back-and-forth', i + 1, now - 60 + i, 'flow_state', flowState(state)]));
    tx.run(session, ['s-short', account.id, old.flowId, now - 50, now - 50, now - 50, now - 20, 'error']);
    tx.run(event, ['s-short', 1, now - 50, 'session_started', '{"type":"session_started"}']);
    tx.run(event, ['s-short', 2, now - 50, 'flow_state', flowState('a')]);
    // Ended under migration 17, as that server left them: analysed, with nothing to analyse.
    for (const id of ['s-back-and-forth', 's-short']) tx.run("INSERT INTO session_analyses (session_id, account_id, state, created_at) VALUES (?, ?, 'none', ?)", [id, account.id, now]);
  });
  await store.close();
  server = await startTestServer({ dataDir });
});

afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('counts the calls stored before the upgrade from their timelines', async () => {
  const response = await server.request('GET', `/v1/analytics/flows/${old.flowId}`, { apiKey: old.apiKey });
  expect(response.status, response.text).toBe(200);
  const sorted = <T>(rows: T[]) => [...rows].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
  expect(response.body.calls).toBe(2);
  expect(sorted(response.body.states)).toEqual(sorted([{ state: 'a', calls: 2 }, { state: 'b', calls: 1 }]));
  expect(sorted(response.body.transitions)).toEqual(
    sorted([
      { from: null, to: 'a', tool: null, calls: 2, times: 2 },
      { from: 'a', to: 'b', tool: null, calls: 1, times: 2 },
      { from: 'b', to: 'a', tool: null, calls: 1, times: 1 },
    ]),
  );
  expect(sorted(response.body.ends)).toEqual(sorted([{ state: 'b', reason: 'caller_hung_up', calls: 1 }, { state: 'a', reason: 'error', calls: 1 }]));
});
