import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, storedAtRest, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

const PAID_PROVIDERS = {
  stt: { provider: 'deepgram' as const, apiKey: 'dg-server' },
  llm: { provider: 'openai' as const, apiKey: 'sk-server' },
  tts: { provider: 'openai' as const, apiKey: 'sk-server' },
};

describe('credit balance on a server without paid providers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('shows 200 cents, the 3-cent list rate and an effective rate, to a JWT and to an API key alike', async () => {
    const account = await createAccount(server);
    for (const credential of [{ jwt: account.jwt }, { apiKey: account.apiKey }]) {
      const balance = await server.request('GET', '/v1/credits/balance', credential);
      expect(balance.status).toBe(200);
      expect(balance.body.balance_usd_cents).toBe(200);
      expect(balance.body.rate_per_minute_usd_cents).toBe(3);
      // No paid provider is configured (speech output is the embedded one): a minute costs nothing.
      expect(balance.body.effective_rate_per_minute_usd_cents).toBe(0);
    }
  });

  it('starts sessions even with an empty balance, since nothing is charged', async () => {
    const account = await createAccount(server);
    const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
    await server.app.services.store.credits.debit(accountId, 200, { idempotencyKey: `empty:${accountId}` });
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    expect(response.status).toBe(200);
    expect(response.body.credits_remaining).toBe(0);
  });

  it('needs a credential', async () => {
    expectError(await server.request('GET', '/v1/credits/balance'), 401, 'missing_credentials');
  });
});

describe('credits and provider keys on a server with paid providers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ providers: PAID_PROVIDERS });
  });
  afterAll(async () => {
    await server.close();
  });

  it('charges the full 3 cents a minute while the account has no keys of its own', async () => {
    const account = await createAccount(server);
    const balance = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    expect(balance.body).toMatchObject({ balance_usd_cents: 200, rate_per_minute_usd_cents: 3, effective_rate_per_minute_usd_cents: 3 });
  });

  it('charges 2 cents a minute once the account sets its own LLM key, and 3 again once it clears it', async () => {
    const account = await createAccount(server);
    const patch = await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: { llm_api_key: 'sk-own-0123456789abcd' } });
    expect(patch.status).toBe(200);
    let balance = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    expect(balance.body).toMatchObject({ rate_per_minute_usd_cents: 3, effective_rate_per_minute_usd_cents: 2 });

    expect((await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: { llm_api_key: null } })).status).toBe(200);
    balance = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    expect(balance.body.effective_rate_per_minute_usd_cents).toBe(3);
  });

  it('charges nothing when the account has its own key for every part', async () => {
    const account = await createAccount(server);
    const patch = await server.request('PATCH', '/v1/providers', {
      jwt: account.jwt,
      body: { stt_api_key: 'dg-own-0123456789abcd', llm_api_key: 'sk-own-0123456789abcd', tts_api_key: 'sk-own-tts-456789wxyz' },
    });
    expect(patch.status).toBe(200);
    const balance = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    expect(balance.body.effective_rate_per_minute_usd_cents).toBe(0);
  });

  it('shows unset keys as null and set keys masked as sk-…abcd, never in full', async () => {
    const account = await createAccount(server);
    const before = await server.request('GET', '/v1/providers', { apiKey: account.apiKey });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ stt_api_key: null, tts_api_key: null, llm_api_key: null });
    expect(before.body).toMatchObject({ stt_provider: 'deepgram', llm_provider: 'openai', tts_provider: 'openai' });
    // The server's own keys are not shown either.
    expect(before.text).not.toContain('dg-server');
    expect(before.text).not.toContain('sk-server');

    const secret = 'sk-own-SECRETsecret-wxyz';
    const patch = await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: { llm_api_key: secret } });
    expect(patch.status).toBe(200);
    expect(patch.body.llm_api_key).toBe('sk-…wxyz');
    expect(patch.text).not.toContain(secret);
    expect(patch.text).not.toContain('SECRET');

    for (const credential of [{ jwt: account.jwt }, { apiKey: account.apiKey }]) {
      const after = await server.request('GET', '/v1/providers', credential);
      expect(after.status).toBe(200);
      expect(after.body).toMatchObject({ llm_api_key: 'sk-…wxyz', stt_api_key: null, tts_api_key: null });
      expect(after.text).not.toContain(secret);
      expect(after.text).not.toContain('SECRET');
    }
  });

  it('clears a key with null, after which GET shows null again', async () => {
    const account = await createAccount(server);
    await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: { stt_api_key: 'dg-own-0123456789abcd', tts_api_key: 'sk-tts-0123456789abcd' } });
    const cleared = await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: { stt_api_key: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ stt_api_key: null, tts_api_key: 'sk-…abcd' });
    const read = await server.request('GET', '/v1/providers', { jwt: account.jwt });
    expect(read.body).toMatchObject({ stt_api_key: null, tts_api_key: 'sk-…abcd', llm_api_key: null });
  });

  it('refuses PATCH with an API key with 403 wrong_credential_kind and changes nothing', async () => {
    const account = await createAccount(server);
    const patch = await server.request('PATCH', '/v1/providers', { apiKey: account.apiKey, body: { llm_api_key: 'sk-own-0123456789abcd' } });
    expectError(patch, 403, 'wrong_credential_kind');
    expect((await server.request('GET', '/v1/providers', { apiKey: account.apiKey })).body.llm_api_key).toBeNull();
  });

  it.each([
    ['an unknown field', { openai_key: 'sk-own-0123456789abcd' }],
    ['a key that is a number', { llm_api_key: 12345678901 }],
    ['a key that is too short to be one', { llm_api_key: 'sk-1' }],
    ['an empty object', {}],
  ])('refuses PATCH with %s with 422 invalid_request', async (_what, body) => {
    const account = await createAccount(server);
    expectError(await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body }), 422, 'invalid_request');
  });

  it('refuses a session with 402 insufficient_credits once the balance is below the per-minute rate', async () => {
    const account = await createAccount(server);
    const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
    const drained = await server.app.services.store.credits.debit(accountId, 199, { idempotencyKey: 'drain' });
    expect(drained.ok).toBe(true);
    const balance = await server.request('GET', '/v1/credits/balance', { apiKey: account.apiKey });
    expect(balance.body.balance_usd_cents).toBe(1);

    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    expectError(response, 402, 'insufficient_credits');
    const list = await server.request('GET', '/v1/sessions', { apiKey: account.apiKey });
    expect(list.body).toEqual([]);
  });

  it('starts a session while the balance covers exactly one minute, and refuses it one cent below', async () => {
    const account = await createAccount(server);
    const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
    await server.app.services.store.credits.debit(accountId, 197, { idempotencyKey: `to-three:${accountId}` });
    const atRate = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    expect(atRate.status).toBe(200);
    expect(atRate.body.credits_remaining).toBe(3);
    await server.app.services.store.credits.debit(accountId, 1, { idempotencyKey: `to-two:${accountId}` });
    expectError(await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} }), 402, 'insufficient_credits');
  });

  it('still starts a session on a low balance when the account pays for every part with its own keys', async () => {
    const account = await createAccount(server);
    const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
    await server.app.services.store.credits.debit(accountId, 199, { idempotencyKey: `drain:${accountId}` });
    await server.request('PATCH', '/v1/providers', {
      jwt: account.jwt,
      body: { stt_api_key: 'dg-own-0123456789abcd', llm_api_key: 'sk-own-0123456789abcd', tts_api_key: 'sk-own-0123456789abcd' },
    });
    const response = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    expect(response.status).toBe(200);
    expect(response.body.credits_remaining).toBe(1);
  });
});

describe('provider keys at rest', () => {
  it('are not stored in plain text anywhere the server keeps data', async () => {
    const server = await startTestServer({ providers: PAID_PROVIDERS });
    const secrets = ['sk-plaintext-LLM-find-me-0001', 'dg-plaintext-STT-find-me-0002', 'sk-plaintext-TTS-find-me-0003'];
    try {
      const account = await createAccount(server);
      const patch = await server.request('PATCH', '/v1/providers', {
        jwt: account.jwt,
        body: { llm_api_key: secrets[0], stt_api_key: secrets[1], tts_api_key: secrets[2] },
      });
      expect(patch.status).toBe(200);
      // Close the app (flushing the store) but keep the data dir to search it.
      await server.app.close();
      const stored = await storedAtRest(server);
      expect(stored.length).toBeGreaterThan(0);
      // A control: the search does see what the store wrote (the account's email is there).
      expect(stored.some(({ bytes }) => bytes.includes(Buffer.from(account.email)))).toBe(true);
      for (const { where: file, bytes } of stored) {
        for (const secret of secrets) {
          expect(bytes.includes(Buffer.from(secret, 'utf8')), `${secret} in ${file}`).toBe(false);
          expect(bytes.includes(Buffer.from(secret, 'utf16le')), `${secret} (UTF-16) in ${file}`).toBe(false);
          expect(bytes.includes(Buffer.from(secret.slice(7), 'utf8')), `part of ${secret} in ${file}`).toBe(false);
        }
      }
    } finally {
      await server.close();
    }
  });
});
