// Replaying recorded sessions against a draft: the caller's turns of the published version's last
// sessions, with the http answers the service gave then, are played to the draft (the configured
// model as its agent), and the report says where the draft's path leaves the recorded one.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { BOOKING_PATH, GOOD_JUDGE, rules } from '../support/booking-simulated-callers.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';

const BOOKING_YAML = readFileSync(BOOKING_PATH, 'utf8');

let fake: FakeOpenAI;
let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let flowId: string;

/** A call to the published version as the session's timeline recorded it: Tuesday, nothing free, another day asked for. */
const RECORDED: ServerEvent[] = [
  { type: 'flow_state', state: 'welcome', prompt: '', artifact_type: 'card', variables: {}, tools: ['check_availability'] },
  { type: 'transcript', role: 'agent', text: 'Welcome to Maple Street Dental.', final: true },
  { type: 'transcript', role: 'user', text: 'Do you have anything on Tuesday?', final: true },
  { type: 'tool_result', name: 'check_availability', url: 'https://clinic.example.com/voxflow/availability', method: 'POST', arguments: { day: 'tuesday' }, ok: true, http_status: 200, duration_ms: 80, result: { next_state: 'ask_day' }, error: null, from_state: 'welcome', to_state: 'ask_day', source: 'model' },
  { type: 'flow_state', state: 'ask_day', prompt: '', artifact_type: 'card', variables: { day: 'tuesday' }, tools: ['check_availability'] },
  { type: 'transcript', role: 'agent', text: 'Nothing is free on Tuesday. Another day?', final: true },
];

beforeAll(async () => {
  fake = await startFakeOpenAI({ rules: rules(GOOD_JUDGE) });
  server = await startTestServer({ providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: fake.url } } });
  account = await createAccount(server);
  flowId = await createFlow(server, account.apiKey, 'Booking', BOOKING_YAML);
  // The recorded call, as the outcomes layer stores one.
  const { store } = server.app.services;
  const session = await store.sessions.createConnected({ accountId: (await store.accounts.findByEmail(account.email))!.id, flowId, transport: 'websocket', mode: 'flow', context: {}, metadata: {}, flowVersion: 1 });
  await store.timelines.append(session.id, RECORDED.map((event, i) => ({ seq: i + 1, at: 1_700_000_000 + i, type: event.type, data: JSON.stringify(event) })), { events: RECORDED.length, bytes: 1_000, dropped: 0 });
  await store.sessions.end(session.id, { endedAt: 1_700_000_100, reason: 'client_disconnected', creditsChargedCents: 0, durationSecs: 60 });
});
afterAll(() => fake.close());

describe('replaying recorded sessions against a draft', () => {
  it("reports the step where the draft's path leaves the recorded one, with both states", { timeout: 90_000 }, async () => {
    // The draft no longer lets the availability answer choose ask_day: nothing free stays in welcome.
    const draft = BOOKING_YAML.replace('check_availability: [offer_slot, ask_day]\n  ask_day:', 'check_availability: [offer_slot]\n  ask_day:');
    expect(draft).not.toBe(BOOKING_YAML);
    expect((await server.request('PUT', `/v1/flows/${flowId}/draft`, { apiKey: account.apiKey, body: { yaml_content: draft } })).status).toBe(200);

    const started = await server.request('POST', `/v1/flows/${flowId}/replays`, { apiKey: account.apiKey, body: { sessions: 3 } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ mode: 'model', draft: true, test_ids: [] });
    let run: any;
    await vi.waitFor(async () => {
      run = (await server.request('GET', `/v1/flows/${flowId}/tests/runs/${started.body.id}`, { apiKey: account.apiKey })).body;
      expect(run.status).not.toBe('running');
    }, { timeout: 60_000, interval: 100 });
    expect(run.status).toBe('failed');
    const [replayed] = run.result.tests;
    expect(replayed.name).toMatch(/^replay of session /);
    const step = replayed.runs[0].steps[0];
    expect(step.action).toBe('user: Do you have anything on Tuesday?');
    // The recorded answer was given to the draft's call, and the draft stayed where the recording moved on.
    expect(step.tool_calls[0]).toMatchObject({ name: 'check_availability', answer: { ok: true, http_status: 200 } });
    expect(step.checks.find((c: any) => c.check === 'state')).toMatchObject({ passed: false, expected: 'ask_day', actual: 'welcome' });
  });

  it('says so when the published version has no recorded call to replay', async () => {
    const other = await createFlow(server, account.apiKey, 'Empty', BOOKING_YAML);
    const refused = await server.request('POST', `/v1/flows/${other}/replays`, { apiKey: account.apiKey, body: {} });
    expect(refused.status).toBe(422);
    expect(refused.body.error.message).toContain("has a caller's turn to replay");
  });
});
