// The studio keeps its sign-in across tabs and reloads with a
// refresh token in an HttpOnly, SameSite=Strict cookie, traded at POST /auth/refresh for an
// access token that lives only in the page's memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const post = (path: string, init: { cookie?: string; body?: unknown; origin?: string; bearer?: string } = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: {
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.cookie ? { cookie: init.cookie } : {}),
      ...(init.origin ? { origin: init.origin } : {}),
      ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });

/** The cookie a browser would send back, from a Set-Cookie header. */
const cookieFrom = (response: Response) => response.headers.get('set-cookie')!.split(';')[0]!;

describe('the refresh cookie', () => {
  const email = `tabs-${Date.now()}@example.com`;
  const password = 'correct horse battery staple';

  it('is set by signup and login: HttpOnly, SameSite=Strict, only for /auth, not Secure on plain http', async () => {
    const signup = await post('/auth/signup', { body: { email, password } });
    expect(signup.status).toBe(200);
    const setCookie = signup.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^voxflow_refresh=[\w-]+\.[\w-]+\.[\w-]+;/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/auth');
    expect(setCookie).not.toContain('Secure');
    const login = await post('/auth/login', { body: { email, password } });
    expect(login.headers.get('set-cookie')).toMatch(/^voxflow_refresh=/);
    expect(await login.json()).toMatchObject({ token_type: 'bearer', email });
  });

  it('is traded for a working access token, with the email, and renewed', async () => {
    const cookie = cookieFrom(await post('/auth/login', { body: { email, password } }));
    const refreshed = await post('/auth/refresh', { cookie, origin: server.url });
    expect(refreshed.status).toBe(200);
    const body = (await refreshed.json()) as { access_token: string };
    expect(body).toMatchObject({ token_type: 'bearer', email });
    expect(refreshed.headers.get('set-cookie')).toMatch(/^voxflow_refresh=/);
    const flows = await fetch(`${server.url}/v1/flows`, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(flows.status).toBe(200);
  });

  it('is good for nothing else, and nothing else is good for it', async () => {
    const login = await post('/auth/login', { body: { email, password } });
    const refreshToken = cookieFrom(login).split('=')[1]!;
    const { access_token } = (await login.json()) as { access_token: string };
    // The refresh token is not an access token.
    const asBearer = await fetch(`${server.url}/v1/flows`, { headers: { authorization: `Bearer ${refreshToken}` } });
    expect(asBearer.status).toBe(401);
    // An access token in the cookie is not a refresh token.
    const swapped = await post('/auth/refresh', { cookie: `voxflow_refresh=${access_token}` });
    expect(swapped.status).toBe(401);
    expect(swapped.headers.get('set-cookie')).toContain('Max-Age=0');
    // No cookie: not signed in in this browser.
    const none = await post('/auth/refresh');
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('missing_credentials');
  });

  it('is refused to another site’s page, and cleared by logout', async () => {
    const cookie = cookieFrom(await post('/auth/login', { body: { email, password } }));
    const foreign = await post('/auth/refresh', { cookie, origin: 'https://evil.example.com' });
    expect(foreign.status).toBe(403);
    const logout = await post('/auth/logout', { cookie, origin: server.url });
    expect(logout.status).toBe(204);
    expect(logout.headers.get('set-cookie')).toMatch(/^voxflow_refresh=;.*Max-Age=0/);
  });

  it('signs out on the server: tokens issued before the logout stop working, a new sign-in works', async () => {
    const login = await post('/auth/login', { body: { email, password } });
    const cookie = cookieFrom(login);
    const { access_token: before } = (await login.json()) as { access_token: string };
    // Another tab of the same browser traded the cookie for its own access token.
    const otherTab = (await (await post('/auth/refresh', { cookie, origin: server.url })).json()) as { access_token: string };
    expect((await post('/auth/logout', { cookie, origin: server.url })).status).toBe(204);

    for (const token of [before, otherTab.access_token]) {
      const key = await post('/auth/api-keys?label=after%20sign-out', { bearer: token, origin: server.url });
      expect(key.status).toBe(401);
      expect(((await key.json()) as { error: { message: string } }).error.message).toContain('sign in again');
    }
    // A copy of the cookie kept from before is refused too.
    expect((await post('/auth/refresh', { cookie, origin: server.url })).status).toBe(401);

    // Signing in again at once works.
    const again = await post('/auth/login', { body: { email, password } });
    const { access_token } = (await again.json()) as { access_token: string };
    expect((await fetch(`${server.url}/v1/flows`, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(200);
    expect((await post('/auth/refresh', { cookie: cookieFrom(again), origin: server.url })).status).toBe(200);
  });
});
