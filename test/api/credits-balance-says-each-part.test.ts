// The balance says what each part of a session costs a minute and whose key
// serves it, so the studio can say before Talk what a session will cost. The spec's fields stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';

describe('the balance, part by part', () => {
  let server: TestServer;
  let openai: FakeOpenAI;
  beforeAll(async () => {
    openai = await startFakeOpenAI();
    server = await startTestServer({
      providers: {
        stt: { provider: 'deepgram', apiKey: 'dg-server' },
        llm: { provider: 'openai', apiKey: 'sk-server', baseUrl: openai.url },
        tts: { provider: 'flite' },
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await openai?.close();
  });

  it('prices speech to text and the model at 1¢ on the server key, and the embedded voice at 0¢', async () => {
    const account = await createAccount(server);
    const balance = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    expect(balance.status).toBe(200);
    expect(balance.body).toEqual({
      balance_usd_cents: 200,
      rate_per_minute_usd_cents: 3,
      effective_rate_per_minute_usd_cents: 2,
      parts: {
        stt: { provider: 'deepgram', key_source: 'server', rate_per_minute_usd_cents: 1 },
        llm: { provider: 'openai', key_source: 'server', rate_per_minute_usd_cents: 1 },
        tts: { provider: 'flite', key_source: 'embedded', rate_per_minute_usd_cents: 0 },
      },
    });
  });

  it('prices the model at 0¢ once the account serves it with its own key, and the parts add up to the effective rate', async () => {
    const account = await createAccount(server);
    const patch = await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: { llm_api_key: 'sk-own-0123456789abcd', llm_base_url: openai.url } });
    expect(patch.status).toBe(200);
    // The key was checked against the model server and taken without a doubt.
    expect(patch.body.warnings).toBeUndefined();
    const balance = await server.request('GET', '/v1/credits/balance', { jwt: account.jwt });
    expect(balance.body.parts.llm).toEqual({ provider: 'openai', key_source: 'account', rate_per_minute_usd_cents: 0 });
    expect(balance.body.effective_rate_per_minute_usd_cents).toBe(1);
    const sum = Object.values(balance.body.parts as Record<string, { rate_per_minute_usd_cents: number }>).reduce((total, part) => total + part.rate_per_minute_usd_cents, 0);
    expect(sum).toBe(balance.body.effective_rate_per_minute_usd_cents);
    // The account's key is never in the answer.
    expect(balance.text).not.toContain('sk-own');
  });
});
