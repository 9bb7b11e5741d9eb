// `voxflow replay`, as CI runs it: a child process against a running server (test/support's real
// server, its model the fake OpenAI), replaying the booking example's recorded call against the
// draft. A draft that no longer lets the availability answer choose ask_day leaves the recorded
// path (exit 1, the turn and both states in the report); the unchanged flow keeps it (exit 0);
// bad usage, a wrong key and an unreachable server exit 2 with a clear message, and the key is
// never printed.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { BOOKING_PATH, GOOD_JUDGE, rules } from '../support/booking-simulated-callers.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { VOXFLOW_BIN, voxflow } from '../support/voxflow-command.ts';

const BOOKING_YAML = readFileSync(BOOKING_PATH, 'utf8');

/** A call to the published version as its timeline recorded it: Tuesday, nothing free, another day asked for. */
const RECORDED: ServerEvent[] = [
  { type: 'flow_state', state: 'welcome', prompt: '', artifact_type: 'card', variables: {}, tools: ['check_availability'] },
  { type: 'transcript', role: 'agent', text: 'Welcome to Maple Street Dental.', final: true },
  { type: 'transcript', role: 'user', text: 'Do you have anything on Tuesday?', final: true },
  { type: 'tool_result', name: 'check_availability', url: 'https://clinic.example.com/voxflow/availability', method: 'POST', arguments: { day: 'tuesday' }, ok: true, http_status: 200, duration_ms: 80, result: { next_state: 'ask_day' }, error: null, from_state: 'welcome', to_state: 'ask_day', source: 'model' },
  { type: 'flow_state', state: 'ask_day', prompt: '', artifact_type: 'card', variables: { day: 'tuesday' }, tools: ['check_availability'] },
  { type: 'transcript', role: 'agent', text: 'Nothing is free on Tuesday. Another day?', final: true },
];

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let fake: FakeOpenAI;
let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let flowId: string;
let dir: string;
beforeAll(async () => {
  fake = await startFakeOpenAI({ rules: rules(GOOD_JUDGE) });
  server = await startTestServer({ providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: fake.url } } });
  account = await createAccount(server);
  flowId = await createFlow(server, account.apiKey, 'Booking', BOOKING_YAML);
  const { store } = server.app.services;
  const session = await store.sessions.createConnected({ accountId: (await store.accounts.findByEmail(account.email))!.id, flowId, transport: 'websocket', mode: 'flow', context: {}, metadata: {}, flowVersion: 1 });
  await store.timelines.append(session.id, RECORDED.map((event, i) => ({ seq: i + 1, at: 1_700_000_000 + i, type: event.type, data: JSON.stringify(event) })), { events: RECORDED.length, bytes: 1_000, dropped: 0 });
  await store.sessions.end(session.id, { endedAt: 1_700_000_100, reason: 'client_disconnected', creditsChargedCents: 0, durationSecs: 60 });
  dir = await mkdtemp(join(tmpdir(), 'voxflow-cli-replay-'));
}, 60_000);
afterAll(async () => {
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const putDraft = async (yaml: string) => expect((await server.request('PUT', `/v1/flows/${flowId}/draft`, { apiKey: account.apiKey, body: { yaml_content: yaml } })).status).toBe(200);

describe('voxflow replay', () => {
  it("exits 1 when the draft's path leaves the recorded one, saying where; 0 when it keeps it", { timeout: 120_000 }, async () => {
    await putDraft(BOOKING_YAML.replace('check_availability: [offer_slot, ask_day]\n  ask_day:', 'check_availability: [offer_slot]\n  ask_day:'));
    // Through the package's bin, as `npx voxflow` runs it; the other runs run the same code from the bundle.
    const changed = await voxflow(['replay', '--server', server.url, '--api-key', account.apiKey, flowId, '--sessions', '3'], { entry: VOXFLOW_BIN });
    expect(changed.stderr).toBe('');
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/^✗ replay of session \S+$/m);
    expect(changed.stdout).toContain('step 1 (user: Do you have anything on Tuesday?): expected state ask_day, but the session is in welcome');
    expect(changed.stdout).toContain('0 of 1 calls kept the recorded path');
    expect(changed.stdout + changed.stderr).not.toContain(account.apiKey);

    // The same, as JUnit XML for CI, the key from the environment and the report also in a file.
    const output = join(dir, 'replay.xml');
    const junit = await voxflow(['replay', '--server', server.url, flowId, '--reporter', 'junit', '--output', output], { env: { VOXFLOW_API_KEY: account.apiKey } });
    expect(junit.code).toBe(1);
    expect(junit.stdout).toContain('failures="1"');
    expect(junit.stdout).toContain('expected state ask_day, but the session is in welcome');
    expect(await readFile(output, 'utf8')).toBe(junit.stdout);

    // Under --min-pass-rate 0 the changed call is reported and the command passes.
    const lenient = await voxflow(['replay', '--server', server.url, '--api-key', account.apiKey, flowId, '--min-pass-rate', '0']);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toContain('0 of 1 calls kept the recorded path (needs 0%)');

    await putDraft(BOOKING_YAML);
    const same = await voxflow(['replay', '--server', server.url, '--api-key', account.apiKey, flowId]);
    expect(same.stderr).toBe('');
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/^✓ replay of session \S+$/m);
    expect(same.stdout).toContain('1 of 1 calls kept the recorded path');
  });

  it('exits 2 with a clear message on bad usage, a wrong key, an unknown flow and an unreachable server, never printing the key', { timeout: 120_000 }, async () => {
    const noFlow = await voxflow(['replay', '--server', server.url, '--api-key', account.apiKey]);
    expect(noFlow.code).toBe(2);
    expect(noFlow.stderr).toContain('voxflow replay: expected the FLOW_ID to replay');
    expect(noFlow.stderr).toContain('Usage: voxflow replay --server URL --api-key KEY FLOW_ID');
    expect(noFlow.stderr).not.toContain(account.apiKey);

    const tooMany = await voxflow(['replay', '--server', server.url, '--api-key', account.apiKey, flowId, '--sessions', '21']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toContain('--sessions must be a number from 1 to 20, not 21');

    const wrongKey = 'vf_live_not-a-key-of-this-server-123456';
    const refused = await voxflow(['replay', '--server', server.url, '--api-key', wrongKey, flowId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^voxflow replay: the server refused the API key/);
    expect(refused.stdout + refused.stderr).not.toContain(wrongKey);

    const unknown = await voxflow(['replay', '--server', server.url, '--api-key', account.apiKey, 'no-such-flow']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^voxflow replay: the server answered 404 \S+: /);

    const url = `http://127.0.0.1:${await closedPort()}`;
    const unreachable = await voxflow(['replay', '--server', url, '--api-key', account.apiKey, flowId]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toBe(`voxflow replay: could not reach the server at ${url} (ECONNREFUSED)\n`);
  });
});
