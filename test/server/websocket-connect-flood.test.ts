// A flood of voice WebSocket connects to one node is shed at the upgrade: past the connects being
// admitted at once (per address and in all), a connect is refused with 503 at_capacity and
// Retry-After before any token, credential or store work, every connect gets an answer, another
// account's requests keep being answered meanwhile, and once the flood is over connects are
// admitted again (no place is left held).
import { describe, expect, it } from 'vitest';
import { tryConnect, type ConnectOutcome } from '../api/admission-clients.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';
import { wsUrl } from '../support/voice-client.ts';

const FLOOD = 60;

describe('a flood of WebSocket connects', () => {
  it("is refused past the connects being admitted at once with 503, while another account's requests are answered", { timeout: 120_000 }, async () => {
    const server = await startTestServer({ limits: { pendingUpgrades: 4, pendingUpgradesPerAddress: 2 } });
    afterThisTest(() => server.close());
    const other = await createAccount(server);
    await createFlow(server, other.apiKey);

    // Tokens that were never handed out: each connect the server admits costs a claim in the store.
    const outcomes: Promise<ConnectOutcome>[] = [];
    for (let i = 0; i < FLOOD; i++) outcomes.push(tryConnect(wsUrl(server.url, `/v1/ws/vx_st_flood${i}`)));
    // Meanwhile another account reads its flows, again and again.
    const reads: Array<Promise<number>> = [];
    for (let i = 0; i < 20; i++) reads.push(server.request('GET', '/v1/flows', { apiKey: other.apiKey }).then((r) => r.status));

    const settled = await Promise.all(outcomes);
    expect(settled.every((o) => !o.ok)).toBe(true);
    const refusals = settled as Array<Extract<ConnectOutcome, { ok: false }>>;
    const shed = refusals.filter((o) => o.status === 503);
    const checked = refusals.filter((o) => o.status === 401);
    // Every connect was answered: shed at the upgrade, or checked and found unknown.
    expect(shed.length + checked.length).toBe(FLOOD);
    expect(shed.length).toBeGreaterThan(0);
    for (const o of shed) expect(o).toMatchObject({ code: 'at_capacity', retryAfter: '1', message: expect.stringContaining('busy admitting voice sessions') });
    for (const o of checked) expect(o.code).toBe('session_token_invalid');
    expect(await Promise.all(reads)).toEqual(reads.map(() => 200));

    // After the flood every place is free again: connects one at a time are all checked, none shed.
    for (let i = 0; i < 6; i++) {
      expect(await tryConnect(wsUrl(server.url, `/v1/ws/vx_st_after${i}`))).toMatchObject({ ok: false, status: 401, code: 'session_token_invalid' });
    }
    // And a real session of the other account connects.
    const started = await server.request('POST', '/v1/sessions', { apiKey: other.apiKey, body: {} });
    const session = await tryConnect(started.body.ws_url as string);
    expect(session.ok).toBe(true);
    if (session.ok) await session.end();
  });
});
