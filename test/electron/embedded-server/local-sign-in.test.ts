// The studio in the desktop signs in without a prompt: the main process creates the local
// account once and gives the studio a working token for it, in every run.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCAL_ACCOUNT_EMAIL, LOCAL_ACCOUNT_FILE, createLocalSignIn } from '../../../electron/local-account.ts';
import { GUESSING_GAME_YAML, startTestServer, type TestServer } from '../../support/server.ts';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve(dataDir?: string): Promise<TestServer> {
  const server = await startTestServer(dataDir ? { dataDir } : {});
  servers.push(server);
  return server;
}

function signInFor(server: TestServer) {
  return createLocalSignIn(server.app.services, server.dataDir);
}

describe('the desktop\'s local sign-in', () => {
  it('creates the local account on first use and returns a token the API accepts, with the signup credit', async () => {
    const server = await serve();
    const { access_token, email } = await signInFor(server)();
    expect(email).toBe(LOCAL_ACCOUNT_EMAIL);
    expect((await server.request('GET', '/v1/flows', { jwt: access_token })).status).toBe(200);
    const balance = await server.request('GET', '/v1/credits/balance', { jwt: access_token });
    expect(balance.body.balance_usd_cents).toBe(200);
    expect(existsSync(join(server.dataDir, LOCAL_ACCOUNT_FILE))).toBe(true);
  });

  it('signs in to the same account after a restart: flows made before are still there', async () => {
    const first = await serve();
    const dataDir = first.dataDir;
    const before = await signInFor(first)();
    const created = await first.request('POST', '/v1/flows', { jwt: before.access_token, body: { name: 'Kept', yaml_content: GUESSING_GAME_YAML } });
    expect(created.status).toBe(201);
    // Restarted on the same data folder (the first server owns its removal).
    servers.splice(servers.indexOf(first), 1);
    await first.app.close();
    const second = await serve(dataDir);
    try {
      const after = await signInFor(second)();
      expect(after.email).toBe(before.email);
      const flows = await second.request('GET', '/v1/flows', { jwt: after.access_token });
      expect(flows.body.map((flow: { id: string }) => flow.id)).toEqual([created.body.id]);
    } finally {
      servers.splice(servers.indexOf(second), 1);
      await second.app.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('creates one account when the studio asks twice at once', async () => {
    const server = await serve();
    const signIn = signInFor(server);
    const [a, b] = await Promise.all([signIn(), signIn()]);
    const flowsOf = async (jwt: string) => (await server.request('POST', '/v1/flows', { jwt, body: { name: jwt.slice(-6), yaml_content: GUESSING_GAME_YAML } })).body.id as string;
    const fromA = await flowsOf(a.access_token);
    const listedByB = await server.request('GET', '/v1/flows', { jwt: b.access_token });
    expect(listedByB.body.map((flow: { id: string }) => flow.id)).toContain(fromA);
  });

  it('cannot be opened with a password: /auth/login refuses the local account', async () => {
    const server = await serve();
    await signInFor(server)();
    for (const password of ['password', 'x', LOCAL_ACCOUNT_EMAIL]) {
      const login = await server.request('POST', '/auth/login', { body: { email: LOCAL_ACCOUNT_EMAIL, password } });
      expect(login.status).toBe(401);
    }
  });

  it('does not adopt an account another local program signed up under the local email first', async () => {
    const server = await serve();
    const squatter = await server.request('POST', '/auth/signup', { body: { email: LOCAL_ACCOUNT_EMAIL, password: 'known to the squatter' } });
    expect(squatter.status).toBe(200);
    const ours = await signInFor(server)();
    expect(ours.email).not.toBe(LOCAL_ACCOUNT_EMAIL);
    expect(ours.email).toMatch(/^local-[0-9a-f]{8}@voxflow\.desktop$/);
    const flow = await server.request('POST', '/v1/flows', { jwt: ours.access_token, body: { name: 'Private', yaml_content: GUESSING_GAME_YAML } });
    expect(flow.status).toBe(201);
    expect((await server.request('GET', `/v1/flows/${flow.body.id}`, { jwt: squatter.body.access_token })).status).toBe(404);
    // And it keeps choosing its own account afterwards.
    expect((await signInFor(server)()).email).toBe(ours.email);
  });
});
