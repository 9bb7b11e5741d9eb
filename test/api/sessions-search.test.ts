// GET /v1/sessions narrowed by its filters: text said in the call (final transcript lines, either
// side, case-insensitive, wildcards taken literally), flow, version or draft, status, end reason,
// a created-at range and the caller's number; each alone and together, never another account's.
// Runs on both stores (the postgres project runs test/api again on PostgreSQL).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../server/store/store.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let store: Store;
let account: Awaited<ReturnType<typeof createAccount>>;
let other: Awaited<ReturnType<typeof createAccount>>;
let booking: string;
let game: string;
const ids: Record<string, string> = {};
const createdAt: Record<string, number> = {};

/** A session as the voice transports leave one: its start, what was said, and its end. */
async function call(
  email: string,
  name: string,
  options: {
    flowId: string | null;
    lines?: Array<{ role: 'user' | 'agent'; text: string; final?: boolean }>;
    version?: number | null;
    draft?: boolean;
    end?: string | null;
    from?: string;
  },
): Promise<void> {
  const accountId = (await store.accounts.findByEmail(email))!.id;
  const phone = options.from ? { direction: 'inbound' as const, from: options.from, to: '+15550001111', carrierCallId: `call-${name}-${randomBytes(4).toString('hex')}`, callStatus: 'answered' as const } : undefined;
  const session = await store.sessions.createConnected({
    accountId,
    flowId: options.flowId,
    transport: phone ? 'twilio' : 'webrtc',
    mode: options.flowId ? 'flow' : 'assistant',
    context: {},
    metadata: {},
    ...(phone && { phone }),
  });
  if (options.flowId) await store.sessions.setFlowVersion(session.id, options.draft ? null : (options.version ?? 1), options.draft ?? false);
  const now = Date.now() / 1000;
  const entries = (options.lines ?? []).map((line, i) => ({
    seq: i + 1,
    at: now,
    type: 'transcript',
    data: JSON.stringify({ type: 'transcript', role: line.role, text: line.text, final: line.final ?? true }),
  }));
  if (entries.length > 0) await store.timelines.append(session.id, entries, { events: entries.length, bytes: entries.reduce((n, e) => n + e.data.length, 0), dropped: 0 });
  if (options.end !== null) await store.sessions.end(session.id, { endedAt: now + 30, reason: options.end ?? 'client_disconnected', creditsChargedCents: 1, durationSecs: 30 });
  ids[name] = session.id;
  createdAt[name] = session.createdAt;
  // Apart in time, so a range can hold some and not others.
  await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The names of the sessions the list gives for `query`, newest first. */
async function listed(query: string, who = account): Promise<string[]> {
  const response = await server.request('GET', `/v1/sessions${query}`, { apiKey: who.apiKey });
  expect(response.status, response.text).toBe(200);
  const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
  return (response.body as Array<{ id: string }>).map((s) => byId.get(s.id) ?? `unknown ${s.id}`);
}

beforeAll(async () => {
  server = await startTestServer();
  store = server.app.services.store;
  account = await createAccount(server);
  other = await createAccount(server);
  booking = await createFlow(server, account.apiKey, 'Booking');
  game = await createFlow(server, account.apiKey, 'Game');
  await call(account.email, 'monday', {
    flowId: booking,
    lines: [
      { role: 'user', text: 'Monday umm', final: false },
      { role: 'user', text: 'Monday morning, please' },
      { role: 'agent', text: 'I have 9:30 on Monday.' },
    ],
  });
  await call(account.email, 'percent', { flowId: booking, version: 2, lines: [{ role: 'user', text: 'Is it 100% free? my_id is 7' }], end: 'agent_ended' });
  await call(account.email, 'draft', { flowId: game, draft: true, lines: [{ role: 'agent', text: 'Think of a THING.' }] });
  await call(account.email, 'phone', { flowId: booking, from: '+442071234567', lines: [{ role: 'user', text: 'Calling about Tuesday' }], end: 'caller_hung_up' });
  await call(account.email, 'live', { flowId: game, end: null, lines: [{ role: 'user', text: 'Still talking on monday' }] });
  await call(other.email, 'elsewhere', { flowId: null, lines: [{ role: 'user', text: 'Monday morning, please' }] });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('searching the sessions list', () => {
  it('without filters lists the account\'s sessions, newest first, as before', async () => {
    expect(await listed('')).toEqual(['live', 'phone', 'draft', 'percent', 'monday']);
  });

  it('finds what was said on either side, case-insensitively, in final lines only, and only in this account', async () => {
    expect(await listed('?q=monday')).toEqual(['live', 'monday']);
    expect(await listed('?q=' + encodeURIComponent('9:30 ON'))).toEqual(['monday']);
    expect(await listed('?q=thing')).toEqual(['draft']);
    // "Monday umm" was an interim line, replaced by the final one: only final lines are searched.
    expect(await listed('?q=umm')).toEqual([]);
    expect(await listed('?q=' + encodeURIComponent('morning, please'), other)).toEqual(['elsewhere']);
  });

  it('takes % and _ literally, and finds nothing in the JSON around the words', async () => {
    expect(await listed('?q=' + encodeURIComponent('100%'))).toEqual(['percent']);
    expect(await listed('?q=' + encodeURIComponent('%'))).toEqual(['percent']);
    expect(await listed('?q=' + encodeURIComponent('my_id'))).toEqual(['percent']);
    expect(await listed('?q=' + encodeURIComponent('my%id'))).toEqual([]);
    expect(await listed('?q=' + encodeURIComponent('y_i'))).toEqual(['percent']);
    expect(await listed('?q=' + encodeURIComponent('m_nday'))).toEqual([]);
    expect(await listed('?q=role')).toEqual([]);
    expect(await listed('?q=transcript')).toEqual([]);
  });

  it('filters by flow, version or draft, status, end reason and the caller\'s number', async () => {
    expect(await listed(`?flow_id=${booking}`)).toEqual(['phone', 'percent', 'monday']);
    expect(await listed(`?flow_id=${game}`)).toEqual(['live', 'draft']);
    expect(await listed('?version=2')).toEqual(['percent']);
    expect(await listed('?version=draft')).toEqual(['draft']);
    expect(await listed('?status=connected')).toEqual(['live']);
    expect(await listed('?status=ended')).toEqual(['phone', 'draft', 'percent', 'monday']);
    expect(await listed('?status=expired')).toEqual([]);
    expect(await listed('?end_reason=caller_hung_up')).toEqual(['phone']);
    expect(await listed('?from_number=' + encodeURIComponent('+44207'))).toEqual(['phone']);
    expect(await listed('?from_number=1234567')).toEqual(['phone']);
    expect(await listed('?from_number=999')).toEqual([]);
    expect(await listed(`?flow_id=no-such-flow`)).toEqual([]);
  });

  it('filters by a created-at range (from inclusive, before exclusive), in Unix seconds or ISO 8601', async () => {
    expect(await listed(`?created_from=${createdAt.percent}&created_before=${createdAt.phone}`)).toEqual(['draft', 'percent']);
    const iso = (seconds: number) => encodeURIComponent(new Date(Math.floor(seconds * 1000)).toISOString());
    expect(await listed(`?created_before=${iso(createdAt.percent!)}`)).toEqual(['monday']);
    expect(await listed(`?created_from=${iso(createdAt.live! + 60)}`)).toEqual([]);
  });

  it('applies every filter given together', async () => {
    expect(await listed(`?q=monday&flow_id=${booking}`)).toEqual(['monday']);
    expect(await listed(`?q=monday&status=connected`)).toEqual(['live']);
    expect(await listed(`?q=tuesday&from_number=44&end_reason=caller_hung_up&version=1`)).toEqual(['phone']);
    expect(await listed(`?q=tuesday&end_reason=agent_ended`)).toEqual([]);
  });

  it.each([
    ['version=latest', 'version'],
    ['version=0', 'version'],
    ['status=gone', 'status'],
    ['created_from=yesterday', 'created_from'],
    ['created_before=2026-13-45', 'created_before'],
    ['from_number=' + encodeURIComponent('+1 (555)'), 'from_number'],
    ['q=' + 'x'.repeat(201), 'q'],
    ['q=%20%20', 'q'],
  ])('refuses %s with 422 invalid_request naming the parameter', async (query, field) => {
    const response = await server.request('GET', `/v1/sessions?${query}`, { apiKey: account.apiKey });
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });
});
