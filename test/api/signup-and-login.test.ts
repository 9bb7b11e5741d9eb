import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let counter = 0;
const freshEmail = () => `signup-${++counter}-${Date.now()}@example.com`;
const PASSWORD = 'a perfectly fine password';

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe('signup', () => {
  it('returns a bearer access token that is a three-part JWT', async () => {
    const response = await server.request('POST', '/auth/signup', { body: { email: freshEmail(), password: PASSWORD } });
    expect(response.status).toBe(200);
    expect(response.body.token_type).toBe('bearer');
    expect(response.body.access_token).toBeTypeOf('string');
    expect(response.body.access_token.split('.')).toHaveLength(3);
  });

  it('issues a token for this service that lasts 24 hours', async () => {
    const response = await server.request('POST', '/auth/signup', { body: { email: freshEmail(), password: PASSWORD } });
    const [header, payload] = response.body.access_token.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toMatchObject({ alg: 'HS256' });
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(claims).toMatchObject({ iss: 'voxflow', aud: 'voxflow-api' });
    expect(claims.sub).toBeTypeOf('string');
    expect(claims.exp - claims.iat).toBe(24 * 60 * 60);
    expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60);
  });

  it('gives the new account 200 cents of free credit', async () => {
    const signup = await server.request('POST', '/auth/signup', { body: { email: freshEmail(), password: PASSWORD } });
    const balance = await server.request('GET', '/v1/credits/balance', { jwt: signup.body.access_token });
    expect(balance.status).toBe(200);
    expect(balance.body.balance_usd_cents).toBe(200);
  });

  it('refuses an email that already has an account with 409 email_taken', async () => {
    const email = freshEmail();
    expect((await server.request('POST', '/auth/signup', { body: { email, password: PASSWORD } })).status).toBe(200);
    const again = await server.request('POST', '/auth/signup', { body: { email, password: 'another password' } });
    expectError(again, 409, 'email_taken');
  });

  it('refuses the same email in other letter case with 409 email_taken', async () => {
    const email = freshEmail();
    expect((await server.request('POST', '/auth/signup', { body: { email, password: PASSWORD } })).status).toBe(200);
    const shouted = await server.request('POST', '/auth/signup', { body: { email: email.toUpperCase(), password: PASSWORD } });
    expectError(shouted, 409, 'email_taken');
  });

  it('lets exactly one of two simultaneous signups for the same email (in different case) win; the other gets 409', async () => {
    const email = freshEmail();
    const responses = await Promise.all(
      [email, email.toUpperCase()].map((e) => server.request('POST', '/auth/signup', { body: { email: e, password: PASSWORD } })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
    expectError(responses.find((r) => r.status === 409)!, 409, 'email_taken');
  });

  it.each([
    ['an email without an at sign', { email: 'not-an-email', password: PASSWORD }, 'email'],
    ['an empty email', { email: '', password: PASSWORD }, 'email'],
    ['a password of 7 characters', { email: 'short-pw@example.com', password: '1234567' }, 'password'],
    ['a password of 1025 characters', { email: 'long-pw@example.com', password: 'x'.repeat(1025) }, 'password'],
    ['no password at all', { email: 'no-pw@example.com' }, 'password'],
  ])('refuses %s with 422 invalid_request naming the field', async (_what, body, field) => {
    const response = await server.request('POST', '/auth/signup', { body });
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('accepts a password of exactly 8 and of exactly 1024 characters', async () => {
    for (const password of ['k7#mQ2vz', 'y'.repeat(1024)]) {
      const email = freshEmail();
      expect((await server.request('POST', '/auth/signup', { body: { email, password } })).status).toBe(200);
      expect((await server.request('POST', '/auth/login', { body: { email, password } })).status).toBe(200);
    }
  });
});

describe('login', () => {
  const email = `login-${Date.now()}@example.com`;

  beforeAll(async () => {
    const signup = await server.request('POST', '/auth/signup', { body: { email, password: PASSWORD } });
    expect(signup.status).toBe(200);
  });

  it('returns a bearer access token that the API accepts', async () => {
    const response = await server.request('POST', '/auth/login', { body: { email, password: PASSWORD } });
    expect(response.status).toBe(200);
    expect(response.body.token_type).toBe('bearer');
    expect(response.body.access_token.split('.')).toHaveLength(3);
    const flows = await server.request('GET', '/v1/flows', { jwt: response.body.access_token });
    expect(flows.status).toBe(200);
  });

  it('accepts the email in other letter case and with surrounding spaces', async () => {
    const response = await server.request('POST', '/auth/login', { body: { email: `  ${email.toUpperCase()} `, password: PASSWORD } });
    expect(response.status).toBe(200);
  });

  it('refuses a wrong password with 401 invalid_login', async () => {
    const response = await server.request('POST', '/auth/login', { body: { email, password: 'the wrong password' } });
    expectError(response, 401, 'invalid_login');
  });

  it('answers an unknown email exactly as a wrong password, so accounts cannot be enumerated', async () => {
    const wrongPassword = await server.request('POST', '/auth/login', { body: { email, password: 'the wrong password' } });
    const unknownEmail = await server.request('POST', '/auth/login', {
      body: { email: `nobody-${Date.now()}@example.com`, password: 'the wrong password' },
    });
    expect(unknownEmail.status).toBe(wrongPassword.status);
    expect(unknownEmail.text).toBe(wrongPassword.text);
  });

  it('refuses a login without a password with 422 invalid_request', async () => {
    const response = await server.request('POST', '/auth/login', { body: { email } });
    expectError(response, 422, 'invalid_request');
    expect(response.body.error.details.map((d: { field: string }) => d.field)).toContain('password');
  });
});
