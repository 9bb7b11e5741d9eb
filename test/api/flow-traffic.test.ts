// GET /v1/analytics/flows/{id} and /sessions (docs/api.md#analytics): the traffic a builder sees
// on the graph equals a direct count of the sessions made here — states reached, moves taken
// (with their tool), where calls ended and why, success — narrowed by time, version, success and
// one outcome field; the calls of one move in pages; another account's flow is absent; a bad
// parameter is a 422 naming it. Sessions are stored through the store as the transports and the
// timeline recorder leave them (a path split over two timeline batches included), plus one real
// WebSocket session walked with simulate_tool. Runs on both stores (the postgres project runs
// test/api again on PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../server/store/store.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

type Account = Awaited<ReturnType<typeof createAccount>>;

const FLOW = `id: booking
version: "1.0.0"
initial_state: ask
states:
  ask:
    respond: false
    agent: { prompt: Ask for a time., tools: [book, help] }
    tools:
      book:
        description: Book the table.
        parameters: { slot: { type: string, required: true } }
      help:
        description: The caller wants a person.
    transitions: { on_tool_call: { book: confirmed, help: person } }
  confirmed:
    respond: false
    agent: { prompt: Confirm the booking., tools: [change] }
    tools:
      change:
        description: The caller wants another time.
    transitions: { on_tool_call: { change: ask } }
  person:
    respond: false
    agent: { prompt: Say a person will call back. }
`;

/** A move: into `to`, by `tool` (none: the call's first state). */
type Step = { to: string; tool?: string };

interface Made {
  id: string;
  createdAt: number;
  path: Step[];
  end: string | null;
  version: number | 'draft';
  success?: 'true' | 'false' | 'unknown';
  booked?: boolean;
}

let server: TestServer;
let store: Store;
let account: Account;
let accountId: string;
let other: Account;
let flowId: string;
let otherFlowOfAccount: string;
const made: Record<string, Made> = {};

/** A session as the transports and the timeline recorder leave one, its path in two batches. */
async function call(name: string, path: Step[], options: { end?: string | null; version?: number | 'draft'; success?: 'true' | 'false' | 'unknown'; booked?: boolean; flow?: string } = {}) {
  const session = await store.sessions.createConnected({
    accountId: accountId,
    flowId: options.flow ?? flowId,
    transport: 'webrtc',
    mode: 'flow',
    context: {},
    metadata: {},
    flowVersion: options.version === 'draft' ? null : (options.version ?? 1),
    flowDraft: options.version === 'draft',
  });
  const now = Date.now() / 1000;
  const events: Array<{ type: string } & Record<string, unknown>> = [{ type: 'session_started' }];
  let state: string | null = null;
  for (const step of path) {
    if (step.tool) events.push({ type: 'tool_call', name: step.tool, arguments: {}, status: 'accepted', reason: null, from_state: state, to_state: step.to, source: 'model' });
    // A rejected call names a target too: it moves nothing and is no move's tool.
    events.push({ type: 'tool_call', name: 'book', arguments: {}, status: 'rejected', reason: 'no', code: 'unlisted_tool', from_state: step.to, to_state: 'person', source: 'model' });
    events.push({ type: 'flow_state', state: step.to, prompt: '', artifact_type: 'text', variables: {}, tools: [] });
    // A flow_state for the same state (variables changed) is no move.
    events.push({ type: 'flow_state', state: step.to, prompt: '', artifact_type: 'text', variables: { n: 1 }, tools: [] });
    state = step.to;
  }
  const entries = events.map((event, i) => ({ seq: i + 1, at: now + i / 100, type: event.type, data: JSON.stringify(event) }));
  const half = Math.ceil(entries.length / 2);
  await store.timelines.append(session.id, entries.slice(0, half), { events: half, bytes: 100, dropped: 0 });
  await store.timelines.append(session.id, entries.slice(half), { events: entries.length, bytes: 200, dropped: 0 });
  const end = options.end === undefined ? 'caller_hung_up' : options.end;
  if (end !== null) await store.sessions.end(session.id, { endedAt: now + 30, reason: end, creditsChargedCents: 1, durationSecs: 30 });
  if (options.success) {
    await store.analyses.open(session.id, accountId, 'pending');
    await store.analyses.complete(session.id, { outcome: { values: { booked: options.booked ?? null }, fields: {}, errors: [] }, success: null }, options.success, []);
  }
  made[name] = { id: session.id, createdAt: session.createdAt, path, end, version: options.version ?? 1, ...(options.success && { success: options.success }), ...(options.booked !== undefined && { booked: options.booked }) };
  // Apart in time, so a range can hold some and not others.
  await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The traffic counted straight from the sessions made, as the API should answer it. */
function expected(sessions: Made[]) {
  const states = new Map<string, Set<string>>();
  const moves = new Map<string, { from: string | null; to: string; tool: string | null; calls: Set<string>; times: number }>();
  const ends = new Map<string, { state: string | null; reason: string; calls: number }>();
  const success = { true: 0, false: 0, unknown: 0, none: 0 };
  for (const s of sessions) {
    let from: string | null = null;
    for (const step of s.path) {
      (states.get(step.to) ?? states.set(step.to, new Set()).get(step.to)!).add(s.id);
      const key = JSON.stringify([from, step.to, step.tool ?? null]);
      const move = moves.get(key) ?? moves.set(key, { from, to: step.to, tool: step.tool ?? null, calls: new Set(), times: 0 }).get(key)!;
      move.calls.add(s.id);
      move.times++;
      from = step.to;
    }
    if (s.end !== null) {
      const key = JSON.stringify([from, s.end]);
      const end = ends.get(key) ?? ends.set(key, { state: from, reason: s.end, calls: 0 }).get(key)!;
      end.calls++;
    }
    success[s.success ?? 'none']++;
  }
  return {
    calls: sessions.length,
    states: [...states].map(([state, ids]) => ({ state, calls: ids.size })),
    transitions: [...moves.values()].map((m) => ({ from: m.from, to: m.to, tool: m.tool, calls: m.calls.size, times: m.times })),
    ends: [...ends.values()],
    success,
  };
}

const sorted = <T>(rows: T[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

async function traffic(query = '', who = account, flow = flowId) {
  const response = await server.request('GET', `/v1/analytics/flows/${flow}${query}`, { apiKey: who.apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

function expectTraffic(body: any, sessions: Made[]) {
  const want = expected(sessions);
  expect({ calls: body.calls, success: body.success }).toEqual({ calls: want.calls, success: want.success });
  expect(sorted(body.states)).toEqual(sorted(want.states));
  expect(sorted(body.transitions)).toEqual(sorted(want.transitions));
  expect(sorted(body.ends)).toEqual(sorted(want.ends));
}

beforeAll(async () => {
  server = await startTestServer();
  store = server.app.services.store;
  account = await createAccount(server);
  other = await createAccount(server);
  accountId = (await store.accounts.findByEmail(account.email))!.id;
  flowId = await createFlow(server, account.apiKey, 'Booking', FLOW);
  otherFlowOfAccount = await createFlow(server, account.apiKey, 'Other', FLOW);
  await call('booked', [{ to: 'ask' }, { to: 'confirmed', tool: 'book' }], { end: 'agent_ended', success: 'true', booked: true });
  await call('gave-up', [{ to: 'ask' }], { success: 'false', booked: false });
  await call('person', [{ to: 'ask' }, { to: 'person', tool: 'help' }], { end: 'transferred', success: 'unknown' });
  // Back and forth: the move ask → confirmed twice in one call counts one call, taken twice.
  await call('changed', [{ to: 'ask' }, { to: 'confirmed', tool: 'book' }, { to: 'ask', tool: 'change' }, { to: 'confirmed', tool: 'book' }], { version: 2, success: 'true', booked: true });
  // Moved by the keypad: no tool.
  await call('keypad', [{ to: 'ask' }, { to: 'person' }], { version: 2, end: 'error' });
  await call('live', [{ to: 'ask' }], { end: null });
  await call('draft', [{ to: 'ask' }, { to: 'confirmed', tool: 'book' }], { version: 'draft' });
  await call('elsewhere', [{ to: 'ask' }], { flow: otherFlowOfAccount });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const counted = (...names: string[]) => names.map((name) => made[name]!);
const published = () => counted('booked', 'gave-up', 'person', 'changed', 'keypad', 'live');

describe('the traffic of a flow', () => {
  it('counts the calls of its published versions: states reached, moves with their tools, ends by state and reason, success', async () => {
    const body = await traffic();
    expectTraffic(body, published());
    // Spelled out once, so the direct count above is not the only witness.
    expect(body.states.find((s: any) => s.state === 'confirmed')).toEqual({ state: 'confirmed', calls: 2 });
    expect(body.transitions.find((t: any) => t.from === 'ask' && t.to === 'confirmed')).toEqual({ from: 'ask', to: 'confirmed', tool: 'book', calls: 2, times: 3 });
    expect(body.ends).toContainEqual({ state: 'person', reason: 'transferred', calls: 1 });
    expect(body.filter).toEqual({ from: null, to: null, version: null, success: null, outcome: null, experiment: null, arm: null });
  });

  it('narrows to a version, the draft, a time range, a success value and an outcome field, together', async () => {
    expectTraffic(await traffic('?version=2'), counted('changed', 'keypad'));
    expectTraffic(await traffic('?version=draft'), counted('draft'));
    const from = made.person!.createdAt;
    const to = made.keypad!.createdAt;
    expectTraffic(await traffic(`?from=${encodeURIComponent(new Date(from * 1000).toISOString())}&to=${encodeURIComponent(new Date(to * 1000).toISOString())}`), counted('person', 'changed'));
    expectTraffic(await traffic('?success=true'), counted('booked', 'changed'));
    expectTraffic(await traffic('?success=unknown'), counted('person'));
    expectTraffic(await traffic('?outcome.booked=false'), counted('gave-up'));
    expectTraffic(await traffic('?outcome.booked=true&version=1'), counted('booked'));
    expectTraffic(await traffic('?outcome.nothing=x'), []);
  });

  it('lists the calls that took one move, newest first, in pages, with their success', async () => {
    const page = async (query: string) => {
      const response = await server.request('GET', `/v1/analytics/flows/${flowId}/sessions${query}`, { apiKey: account.apiKey });
      expect(response.status, response.text).toBe(200);
      return response.body;
    };
    const first = await page('?transition=' + encodeURIComponent('ask->confirmed') + '&limit=1');
    expect(first.sessions.map((s: any) => s.id)).toEqual([made.changed!.id]);
    expect(first.sessions[0]).toMatchObject({ created_at: made.changed!.createdAt, duration_secs: 30, success: true });
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await page('?transition=' + encodeURIComponent('ask->confirmed') + `&limit=1&cursor=${first.next_cursor}`);
    expect(second.sessions.map((s: any) => s.id)).toEqual([made.booked!.id]);
    expect(second.next_cursor).toBeNull();
    const entered = await page('?transition=' + encodeURIComponent('->ask') + '&success=false');
    expect(entered.sessions.map((s: any) => s.id)).toEqual([made['gave-up']!.id]);
    expect((await page('?transition=' + encodeURIComponent('confirmed->ask') + '&version=1')).sessions).toEqual([]);
  });

  it('is another account\'s flow: absent, as is an unknown flow', async () => {
    expectError(await server.request('GET', `/v1/analytics/flows/${flowId}`, { apiKey: other.apiKey }), 404, 'flow_not_found');
    expectError(await server.request('GET', `/v1/analytics/flows/${flowId}/sessions?transition=a->b`, { apiKey: other.apiKey }), 404, 'flow_not_found');
    expectError(await server.request('GET', '/v1/analytics/flows/nope', { apiKey: account.apiKey }), 404, 'flow_not_found');
    expect((await server.request('GET', `/v1/analytics/flows/${flowId}`)).status).toBe(401);
  });

  it('answers a bad parameter with a 422 naming it', async () => {
    const bad = async (path: string, field: string) => {
      const response = await server.request('GET', path, { apiKey: account.apiKey });
      expectError(response, 422, 'invalid_request');
      expect(response.body.error.details.map((d: any) => d.field)).toContain(field);
    };
    await bad(`/v1/analytics/flows/${flowId}?from=yesterday`, 'from');
    await bad(`/v1/analytics/flows/${flowId}?to=2026-13-45T99:00:00Z`, 'to');
    await bad(`/v1/analytics/flows/${flowId}?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z`, 'to');
    await bad(`/v1/analytics/flows/${flowId}?version=0`, 'version');
    await bad(`/v1/analytics/flows/${flowId}?success=maybe`, 'success');
    await bad(`/v1/analytics/flows/${flowId}?sucess=true`, 'sucess');
    await bad(`/v1/analytics/flows/${flowId}?outcome.a=1&outcome.b=2`, 'outcome.b');
    await bad(`/v1/analytics/flows/${flowId}?${encodeURIComponent('outcome.a b')}=1`, 'outcome.a b');
    await bad(`/v1/analytics/flows/${flowId}/sessions`, 'transition');
    await bad(`/v1/analytics/flows/${flowId}/sessions?transition=ask`, 'transition');
    await bad(`/v1/analytics/flows/${flowId}/sessions?transition=a->b&limit=0`, 'limit');
    await bad(`/v1/analytics/flows/${flowId}/sessions?transition=a->b&cursor=zzz`, 'cursor');
  });

  it('counts a real call walked through the flow as the counts above do', { timeout: 60_000 }, async () => {
    const before = await traffic('?version=1');
    const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${account.jwt}`));
    const started = await client.waitFor('session_started', undefined, 15_000);
    await client.waitFor('flow_state');
    client.send({ type: 'simulate_tool', name: 'help', arguments: {} });
    await client.waitFor('flow_state', (e) => e.state === 'person');
    client.send({ type: 'end' });
    const ended = await client.waitFor('session_ended');
    await client.closed;
    const after = await traffic('?version=1');
    const move = (body: any) => body.transitions.find((t: any) => t.from === 'ask' && t.to === 'person' && t.tool === 'help')?.calls ?? 0;
    const end = (body: any) => body.ends.find((e: any) => e.state === 'person' && e.reason === ended.reason)?.calls ?? 0;
    expect({ calls: after.calls - before.calls, move: move(after) - move(before), end: end(after) - end(before) }).toEqual({ calls: 1, move: 1, end: 1 });
    const listed = await server.request('GET', `/v1/analytics/flows/${flowId}/sessions?transition=${encodeURIComponent('ask->person')}&version=1`, { apiKey: account.apiKey });
    expect(listed.body.sessions.map((s: any) => s.id)).toContain(started.session_id);
  });
});
