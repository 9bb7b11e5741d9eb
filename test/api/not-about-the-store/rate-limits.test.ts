import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../../support/server.ts';
import { expectError } from '../error-shape.ts';

function expectRetryAfter(response: { headers: Headers }) {
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
}

describe('the sign-in rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { authPerMinute: 3, credentialPerMinute: 100_000, ipPerMinute: 100_000 } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses the 4th login within a minute with 429 rate_limited and a Retry-After in whole seconds', async () => {
    const email = `limited-${Date.now()}@example.com`;
    const password = 'long enough password';
    expect((await server.request('POST', '/auth/signup', { body: { email, password } })).status).toBe(200);
    for (let i = 1; i <= 3; i++) {
      const login = await server.request('POST', '/auth/login', { body: { email, password } });
      expect(login.status, `login ${i}`).toBe(200);
    }
    const fourth = await server.request('POST', '/auth/login', { body: { email, password } });
    expectError(fourth, 429, 'rate_limited');
    expectRetryAfter(fourth);
  });

  it('does not limit the rest of the API for the same client', async () => {
    expect((await server.request('GET', '/health')).status).toBe(200);
  });
});

describe('the sign-in rate limit and password guessing', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { authPerMinute: 3, credentialPerMinute: 100_000, ipPerMinute: 100_000 } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('counts failed logins, so after 3 wrong guesses even the right password waits with 429', async () => {
    const email = 'victim@example.com';
    const password = 'the right password';
    expect((await server.request('POST', '/auth/signup', { body: { email, password } })).status).toBe(200);
    for (let i = 1; i <= 3; i++) {
      expectError(await server.request('POST', '/auth/login', { body: { email, password: `guess number ${i}` } }), 401, 'invalid_login');
    }
    const right = await server.request('POST', '/auth/login', { body: { email, password } });
    expectError(right, 429, 'rate_limited');
    expectRetryAfter(right);
  });
});

describe('the per-credential rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { authPerMinute: 100_000, credentialPerMinute: 5, ipPerMinute: 100_000 } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses the 6th request of one API key within a minute with 429, while another account\'s key still gets 200', async () => {
    const [busy, quiet] = await Promise.all([createAccount(server), createAccount(server)]);
    for (let i = 1; i <= 5; i++) {
      const response = await server.request('GET', '/v1/flows', { apiKey: busy.apiKey });
      expect(response.status, `request ${i}`).toBe(200);
    }
    const sixth = await server.request('GET', '/v1/flows', { apiKey: busy.apiKey });
    expectError(sixth, 429, 'rate_limited');
    expectRetryAfter(sixth);

    expect((await server.request('GET', '/v1/flows', { apiKey: quiet.apiKey })).status).toBe(200);
  });
});

describe('the per-IP rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { authPerMinute: 100_000, credentialPerMinute: 100_000, ipPerMinute: 5 } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses the client once it has made more requests a minute than allowed, even on open routes', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i++) {
      last = await server.request('GET', '/capabilities');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expectError(last!, 429, 'rate_limited');
    expectRetryAfter(last!);
  });

  it('still answers /health to a client it refuses everything else: a load balancer on that address must not see the node as down', async () => {
    for (let i = 0; i < 6; i++) await server.request('GET', '/capabilities');
    expectError(await server.request('GET', '/capabilities'), 429, 'rate_limited');
    for (let i = 0; i < 10; i++) {
      const health = await server.request('GET', '/health');
      expect({ check: i, status: health.status, health: health.body?.status }).toEqual({ check: i, status: 200, health: 'ok' });
    }
    // Health checks take no share of the budget either: the address is still refused, not let through.
    expectError(await server.request('GET', '/capabilities'), 429, 'rate_limited');
  });
});
