// DNS rebinding: a web page that points its own name at 127.0.0.1 must not be
// able to sign up, take keys or spend the server's provider keys on a loopback-bound server; and
// a page of another origin may change nothing and open no voice socket, except through the
// session token the spec hands to browsers.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectVoice, wsUrl } from '../../support/voice-client.ts';
import { createAccount, startTestServer, type TestServer } from '../../support/server.ts';

let loopback: TestServer;
let hosted: TestServer;
beforeAll(async () => {
  [loopback, hosted] = await Promise.all([
    startTestServer(),
    startTestServer({ host: '0.0.0.0', publicUrl: 'https://voice.example.com', allowedOrigins: ['https://app.example.com'] }),
  ]);
});
afterAll(async () => Promise.all([loopback?.close(), hosted?.close()]));

/** A request with exactly these headers (fetch will not let a caller set Host). */
function raw(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(server.url);
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: url.port, method, path, headers: { ...headers, ...(text ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) } : {}) } },
      (res) => {
        let data = '';
        res.on('data', (chunk) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const port = (server: TestServer) => new URL(server.url).port;
const credentials = () => ({ email: `rebind-${Date.now()}-${Math.random()}@example.com`, password: 'correct horse battery staple' });

describe('a server bound to loopback', () => {
  it('refuses a request whose Host is another name (a rebound DNS name), with 421 and what to do', async () => {
    for (const [method, path, body] of [['GET', '/health', undefined], ['POST', '/auth/signup', credentials()]] as const) {
      const response = await raw(loopback, method, path, { host: `evil.example:${port(loopback)}` }, body);
      expect(response.status, `${method} ${path}`).toBe(421);
      expect(response.body.error.code).toBe('host_not_allowed');
      expect(response.body.error.message).toMatch(/--allowed-hosts/);
    }
  });

  it('answers to its loopback names', async () => {
    for (const host of [`127.0.0.1:${port(loopback)}`, `localhost:${port(loopback)}`, `[::1]:${port(loopback)}`, 'app.localhost']) {
      expect((await raw(loopback, 'GET', '/health', { host })).status, host).toBe(200);
    }
  });

  it('refuses a signup posted by a page of another origin, and takes one from its own studio', async () => {
    const foreign = await raw(loopback, 'POST', '/auth/signup', { host: `127.0.0.1:${port(loopback)}`, origin: 'https://evil.example' }, credentials());
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('origin_not_allowed');
    // A session_token in the query opens only the voice routes to foreign pages, not a signup.
    const smuggled = await raw(loopback, 'POST', '/auth/signup?session_token=x', { host: `127.0.0.1:${port(loopback)}`, origin: 'https://evil.example' }, credentials());
    expect(smuggled.status).toBe(403);
    const own = await raw(loopback, 'POST', '/auth/signup', { host: `127.0.0.1:${port(loopback)}`, origin: `http://127.0.0.1:${port(loopback)}` }, credentials());
    expect(own.status).toBe(200);
    // A backend (no Origin at all) is not a browser.
    expect((await raw(loopback, 'POST', '/auth/signup', { host: `127.0.0.1:${port(loopback)}` }, credentials())).status).toBe(200);
  });

  it('refuses a voice socket opened with an access token from a page of another origin', async () => {
    const account = await createAccount(loopback);
    const opened = connectVoice(wsUrl(loopback.url, `/ws?mode=assistant&access_token=${account.jwt}`), { origin: 'https://evil.example' });
    await expect(opened).rejects.toMatchObject({ status: 403 });
  });
});

describe('a hosted server', () => {
  it('answers any Host (it sits behind a proxy), but still refuses foreign pages that change things', async () => {
    expect((await raw(hosted, 'GET', '/health', { host: 'voice.example.com' })).status).toBe(200);
    const foreign = await raw(hosted, 'POST', '/auth/signup', { host: 'voice.example.com', origin: 'https://evil.example' }, credentials());
    expect(foreign.status).toBe(403);
    const allowed = await raw(hosted, 'POST', '/auth/signup', { host: 'voice.example.com', origin: 'https://app.example.com' }, credentials());
    expect(allowed.status).toBe(200);
  });

  it("lets a customer's web page of any origin open the ws_url its backend handed it", async () => {
    const account = await createAccount(hosted);
    const started = await hosted.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    const client = await connectVoice(wsUrl(hosted.url, `/v1/ws/${started.body.session_token}`), { origin: 'https://shop.example.org' });
    expect((await client.waitFor('session_started')).type).toBe('session_started');
    client.close();
  });
});
