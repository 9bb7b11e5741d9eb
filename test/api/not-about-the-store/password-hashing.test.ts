import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../support/server.ts';
import { expectError } from '../error-shape.ts';

// The production cost (scrypt N = 2^17): slow on purpose, so this file keeps its hashes few.
describe('password hashing at the production cost', () => {
  let server: TestServer;
  const email = `hashed-${Date.now()}@example.com`;
  const password = 'production cost password';
  let signupStatus = 0;

  beforeAll(async () => {
    server = await startTestServer({ passwordHashCost: 17 });
    signupStatus = (await server.request('POST', '/auth/signup', { body: { email, password } })).status;
  }, 30_000);
  afterAll(async () => {
    await server.close();
  });

  it('signs up and stores a self-describing scrypt hash (N = 2^17, r = 8, p = 1) that does not contain the password', async () => {
    expect(signupStatus).toBe(200);
    const stored = (await server.app.services.store.accounts.findByEmail(email))!.passwordHash;
    expect(stored.startsWith('scrypt$17$8$1$')).toBe(true);
    expect(stored.split('$')).toHaveLength(6);
    expect(stored).not.toContain(password);
    expect(stored).not.toContain(Buffer.from(password).toString('base64'));
  });

  it('logs in, and keeps answering GET /health while four logins are hashing', { timeout: 90_000 }, async () => {
    let loginsFinished = 0;
    const logins = Array.from({ length: 4 }, () =>
      server.request('POST', '/auth/login', { body: { email, password } }).then((response) => {
        loginsFinished++;
        return response;
      }),
    );
    // Let the logins reach the server first.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const health = await server.request('GET', '/health');
    const finishedWhenHealthAnswered = loginsFinished;

    expect(health.status).toBe(200);
    const results = await Promise.all(logins);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.every((r) => r.body.token_type === 'bearer')).toBe(true);
    // Hashing runs off the event loop: health answered before even the first login was done.
    expect(finishedWhenHealthAnswered).toBe(0);
  });
});

describe('a burst of logins beyond the hashing queue', () => {
  let server: TestServer;
  const email = `burst-${Date.now()}@example.com`;
  const password = 'burst password';

  beforeAll(async () => {
    // One hash at a time and one waiting; a cost high enough that the burst overlaps it.
    server = await startTestServer({ passwordHashCost: 15, limits: { concurrentPasswordHashes: 1, queuedPasswordHashes: 1 } });
    expect((await server.request('POST', '/auth/signup', { body: { email, password } })).status).toBe(200);
  });
  afterAll(async () => {
    await server.close();
  });

  it('turns the logins that cannot wait away at once with 503 at_capacity, and serves the rest', async () => {
    const responses = await Promise.all(Array.from({ length: 4 }, () => server.request('POST', '/auth/login', { body: { email, password } })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 503, 503]);
    for (const refused of responses.filter((r) => r.status === 503)) expectError(refused, 503, 'at_capacity');
    // Once the burst is over, logins work again.
    expect((await server.request('POST', '/auth/login', { body: { email, password } })).status).toBe(200);
  });
});
