import { describe, expect, it } from 'vitest';
import { createAccount, createFlow } from '../support/server.ts';
import { useVoiceRig } from '../support/voice-server.ts';
import type { WorkerEmbeddedStore } from '../../server/store/sqljs/worker-store.ts';
import { connectVoice, wsUrl, type VoiceClient } from '../support/voice-client.ts';

/** A billed "minute" of 300 ms, so running out takes a second, not minutes. */
const MINUTE_MS = 300;

// Deepgram STT + OpenAI LLM on the server's keys, flite speech (embedded, free): 2 cents a minute
// with both in use. A session that only greets and listens uses the model, never speech to text
// (nobody speaks), so it pays 1 cent a minute: a part costs nothing until it is used.
const RATE = 2;
const MODEL_ONLY = 1;

describe('credits running out during a session', () => {
  const rig = useVoiceRig({ minuteMs: MINUTE_MS, rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello!' } }] });
  let client: VoiceClient;

  const accountIdOf = async (email: string) => (await rig.server.app.services.store.accounts.findByEmail(email))!.id;

  /** Spends the balance down to `left` cents, as earlier sessions would have. */
  async function drainTo(accountId: string, left: number): Promise<void> {
    const { store } = rig.server.app.services;
    const spent = await store.credits.debit(accountId, await store.credits.balance(accountId) - left, { idempotencyKey: `test-drain:${accountId}`, reason: 'test_drain' });
    expect(spent).toMatchObject({ ok: true, balance: left });
  }

  it('charges each minute for the parts in use, then says credits_exhausted, ends the session and closes the socket, never going below zero', { timeout: 15_000 }, async () => {
    const accountId = await accountIdOf(rig.account.email);
    const balanceBody = await rig.server.request('GET', '/v1/credits/balance', { apiKey: rig.account.apiKey });
    expect(balanceBody.body).toMatchObject({ effective_rate_per_minute_usd_cents: RATE });
    // Two minutes' worth of the model: the third minute cannot be paid.
    await drainTo(accountId, 2 * MODEL_ONLY);

    client = await rig.connect();
    const sessionId = (await client.waitFor('session_started')).session_id;
    const exhausted = await client.waitFor('credits_exhausted', undefined, 5_000);
    expect(exhausted.balance_usd_cents).toBe(0);
    const ended = await client.waitFor('session_ended');
    expect(ended).toMatchObject({ reason: 'credits_exhausted', credits_charged_usd_cents: 2 * MODEL_ONLY });
    expect(client.events.indexOf(exhausted)).toBeLessThan(client.events.indexOf(ended));
    expect(client.events.at(-1)).toBe(ended);
    expect((await client.closed).code).toBe(1000);

    const { store } = rig.server.app.services;
    expect(await store.credits.balance(accountId)).toBe(0);
    // The ledger's rows as stored: this test runs on the embedded store.
    const ledger = await (store as WorkerEmbeddedStore).rows<{ delta_cents: number; reason: string; idempotency_key: string; session_id: string | null }>(
      'SELECT delta_cents, reason, idempotency_key, session_id FROM credit_ledger WHERE account_id = ? ORDER BY rowid',
      [accountId],
    );
    // The running balance never dips below zero.
    let running = 0;
    for (const row of ledger) {
      running += row.delta_cents;
      expect(running).toBeGreaterThanOrEqual(0);
    }
    const minutes = ledger.filter((row) => row.session_id === sessionId);
    // The greeting used the model in minute 0; minute 1 was charged for it as it began; speech
    // to text, never used, was never charged.
    expect(minutes).toEqual([
      { delta_cents: -MODEL_ONLY, reason: 'session_minute', idempotency_key: `session:${sessionId}:minute:0:llm`, session_id: sessionId },
      { delta_cents: -MODEL_ONLY, reason: 'session_minute', idempotency_key: `session:${sessionId}:minute:1`, session_id: sessionId },
    ]);

    const sessions = await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey });
    // The session record charges exactly what the ledger debited for it.
    const debited = -minutes.reduce((sum, row) => sum + row.delta_cents, 0);
    expect(sessions.body.find((s: { id: string }) => s.id === sessionId)).toMatchObject({
      status: 'ended',
      end_reason: 'credits_exhausted',
      credits_charged_usd_cents: debited,
    });
    expect(rig.server.app.services.engine.activeSessions).toBe(0);
  });

  it('refuses to start a session with 402 when the balance cannot pay the first minute', async () => {
    const poor = await createAccount(rig.server);
    const flowId = await createFlow(rig.server, poor.apiKey);
    await drainTo(await accountIdOf(poor.email), RATE - 1);

    const refused = await rig.server.request('POST', '/v1/sessions', { apiKey: poor.apiKey, body: { flow_id: flowId } });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');
    // The engine router refuses the same account at the upgrade.
    await expect(connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${flowId}`), { 'x-service-key': poor.apiKey })).rejects.toMatchObject({ status: 402 });
    expect(await rig.server.app.services.store.credits.balance(await accountIdOf(poor.email))).toBe(RATE - 1);
    const sessions = await rig.server.request('GET', '/v1/sessions', { apiKey: poor.apiKey });
    expect(sessions.body).toEqual([]);
  });
});

describe('a part costs nothing until it is used', () => {
  const rig = useVoiceRig({ transcripts: ['Hello there'], rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello!' } }, { when: { lastRole: 'user' }, respond: { text: 'Hi again.' } }] });

  const debitsOf = (sessionId: string) =>
    (rig.server.app.services.store as WorkerEmbeddedStore).rows<{ delta_cents: number; idempotency_key: string }>('SELECT delta_cents, idempotency_key FROM credit_ledger WHERE session_id = ? ORDER BY rowid', [sessionId]);

  it('a typed conversation pays for the model only; speaking adds speech to text from that minute', { timeout: 30_000 }, async () => {
    const client = await rig.connect();
    const sessionId = (await client.waitFor('session_started')).session_id;
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: 'Typed, not spoken' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Hi again.');
    expect(await debitsOf(sessionId)).toEqual([{ delta_cents: -1, idempotency_key: `session:${sessionId}:minute:0:llm` }]);

    await client.speak('Hello there');
    await client.waitFor('transcript', (e) => e.role === 'user' && e.text === 'Hello there');
    expect(await debitsOf(sessionId)).toEqual([
      { delta_cents: -1, idempotency_key: `session:${sessionId}:minute:0:llm` },
      { delta_cents: -1, idempotency_key: `session:${sessionId}:minute:0:stt` },
    ]);
    client.send({ type: 'end' });
    const ended = await client.waitFor('session_ended');
    expect(ended.credits_charged_usd_cents).toBe(2);
  });
});
