import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestResponse, type TestServer } from '../support/server.ts';
import { wsUrl } from '../support/voice-client.ts';
import { admitAtOnce, makeOffer, tryConnect, type ConnectOutcome, type OpenSession } from './admission-clients.ts';
import { expectError } from './error-shape.ts';

// One account holds at most VOXFLOW_SESSIONS_PER_ACCOUNT live voice sessions (10 by default),
// counted together over the engine router's WebSocket, hosted session tokens and WebRTC, and
// counted from the moment each is admitted: the free account held 105 sessions and
// locked every other account out. Past its limit an account gets 429 too_many_sessions;
// other accounts go on as before. The desktop app's own server has no such limit:
// embedded-store-only/desktop-server-never-limits-its-account.test.ts (that server always opens
// its embedded store, so the PostgreSQL run would only repeat it).

const LIMIT = 10;

type Account = Awaited<ReturnType<typeof createAccount>>;

describe('the per-account limit on a hosted server (the default, 10)', () => {
  let server: TestServer;
  let offer: Awaited<ReturnType<typeof makeOffer>>;
  const held: OpenSession[] = [];

  beforeAll(async () => {
    // Unconnected peers keep their sessions' places for the whole test.
    [server, offer] = await Promise.all([startTestServer({}, { webrtc: { connectTimeoutMs: 60_000 } }), makeOffer()]);
  });
  afterAll(async () => {
    for (const session of held) session.socket.close();
    await offer?.close();
    await server?.close();
  });

  /** 3× the limit for one account at once: WebRTC offers, hosted session tokens and /ws, mixed. */
  async function thirtyAtOnce(account: Account): Promise<{ open: OpenSession[]; answered: TestResponse[]; refusals: Array<{ status: number; code?: string; message: string }> }> {
    const tokens = await Promise.all(Array.from({ length: 5 }, () => server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} })));
    const offers = Array.from({ length: 5 }, () => server.request('POST', `/offer?mode=assistant&access_token=${account.jwt}`, { body: { sdp: offer.sdp, type: 'offer' } }));
    const sockets = admitAtOnce([
      ...tokens.map((t) => () => tryConnect(t.body.ws_url as string)),
      ...Array.from({ length: 20 }, () => (): Promise<ConnectOutcome> => tryConnect(wsUrl(server.url, '/ws?mode=assistant'), { 'x-service-key': account.apiKey })),
    ]);
    const [offered, { open, refused }] = await Promise.all([Promise.all(offers), sockets]);
    held.push(...open);
    return {
      open,
      answered: offered.filter((o) => o.status === 200),
      refusals: [...refused, ...offered.filter((o) => o.status !== 200).map((o) => ({ status: o.status, code: o.body?.error?.code as string | undefined, message: o.body?.error?.message as string }))],
    };
  }

  it('30 sessions of one account asked for at once over every transport: 10 admitted, 20 get 429 too_many_sessions naming the limit; another account is unaffected', { timeout: 30_000 }, async () => {
    const [greedy, other] = [await createAccount(server), await createAccount(server)];
    const [mine, theirs] = await Promise.all([thirtyAtOnce(greedy), thirtyAtOnce(other)]);
    for (const outcome of [mine, theirs]) {
      expect(outcome.open.length + outcome.answered.length).toBe(LIMIT);
      expect(outcome.refusals).toHaveLength(3 * LIMIT - LIMIT);
      for (const refusal of outcome.refusals) expect(refusal).toMatchObject({ status: 429, code: 'too_many_sessions' });
      expect(outcome.refusals[0]!.message).toMatch(/10 live voice sessions/);
    }

    // At its limit the account is refused on every way in, one at a time too…
    expectError(await server.request('POST', `/offer?mode=assistant&access_token=${greedy.jwt}`, { body: { sdp: offer.sdp, type: 'offer' } }), 429, 'too_many_sessions');
    expect(await tryConnect(wsUrl(server.url, '/ws?mode=assistant'), { 'x-service-key': greedy.apiKey })).toMatchObject({ ok: false, status: 429, code: 'too_many_sessions' });
    // …while a third account, and the server, still have room.
    const third = await createAccount(server);
    const fresh = await tryConnect(wsUrl(server.url, '/ws?mode=assistant'), { 'x-service-key': third.apiKey });
    expect(fresh.ok).toBe(true);
    if (fresh.ok) held.push(fresh);

    // Once one of its sessions ends (a WebSocket one: at most 5 of the 10 are peers), the account may start another.
    await mine.open[0]!.end();
    const next = await tryConnect(wsUrl(server.url, `/ws?mode=assistant&access_token=${greedy.jwt}`));
    expect(next.ok).toBe(true);
    if (next.ok) held.push(next);
  });
});
