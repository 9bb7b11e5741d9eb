// Answers that carry a secret are never cached; every answer says nosniff.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('answers that carry a secret', () => {
  it('say Cache-Control: no-store: signup, login and the one-time API key', async () => {
    const email = `cache-${Date.now()}@example.com`;
    const signup = await server.request('POST', '/auth/signup', { body: { email, password: 'correct horse battery staple' } });
    expect(signup.headers.get('cache-control')).toBe('no-store');
    const login = await server.request('POST', '/auth/login', { body: { email, password: 'correct horse battery staple' } });
    expect(login.headers.get('cache-control')).toBe('no-store');
    const key = await server.request('POST', '/auth/api-keys?label=x', { jwt: login.body.access_token });
    expect(key.status).toBe(201);
    expect(key.headers.get('cache-control')).toBe('no-store');
  });
});

describe('every JSON answer', () => {
  it('says nosniff, errors included', async () => {
    const account = await createAccount(server);
    for (const response of [
      await server.request('GET', '/v1/flows', { apiKey: account.apiKey }),
      await server.request('GET', '/v1/flows'),
      await server.request('GET', '/no-such-route'),
      await server.request('GET', '/health'),
    ]) {
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});
