// `npm run serve` runs the esbuild bundle in dist/server, not the sources: packages are bundled
// into it and workers and assets are copied beside it, so it is checked as a host would run it
// (the bundle this run built with the same script: test/support/server-bundle.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { serverBundle } from '../support/server-bundle.ts';
import { spawnServer, type ServerProcess } from '../support/spawn-server.ts';

let server: ServerProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxflow-bundle-'));
  server = await spawnServer(['--data-dir', dataDir], {}, 60_000, [serverBundle()]);
}, 60_000);
afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await rm(dataDir, { recursive: true, force: true });
});

test('the bundle serves the API: sign up, create a flow from YAML, list it', async () => {
  const signup = await fetch(`${server.url}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'host@example.com', password: 'long enough password' }) });
  expect(signup.status).toBe(200);
  const { access_token } = (await signup.json()) as { access_token: string };
  const auth = { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' };
  const created = await fetch(`${server.url}/v1/flows`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Tiny', yaml_content: 'id: tiny\nversion: "1.0.0"\ninitial_state: start\nstates:\n  start:\n    agent:\n      prompt: Say hello.\n' }) });
  expect(created.status).toBe(201);
  const list = (await (await fetch(`${server.url}/v1/flows`, { headers: auth })).json()) as Array<{ name: string }>;
  expect(list.map((f) => f.name)).toEqual(['Tiny']);
});

// A process's first offer, sent as soon as an account exists: werift loads just after the server
// starts listening, so this offer may well come while it is still loading, beside the session's
// admission. A refusal that came in that window was an unhandled rejection, which ends a Node
// process; whenever it comes, the caller is answered and the server stays up.
test('a first offer refused while WebRTC is still loading is answered, and the server stays up', async () => {
  const signup = await fetch(`${server.url}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'caller@example.com', password: 'long enough password' }) });
  const { access_token } = (await signup.json()) as { access_token: string };
  const sdp = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n';
  const offer = await fetch(`${server.url}/offer?mode=flow&access_token=${access_token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sdp, type: 'offer' }) });
  expect(offer.status).toBe(422);
  expect(((await offer.json()) as { error: { message: string } }).error.message).toMatch(/program_id/);
  expect((await fetch(`${server.url}/health`)).status).toBe(200);
  expect(server.child.exitCode).toBeNull();
});

test('the bundle finds its workers and pages: voice activity detection loads, /test and the studio answer', async () => {
  // The Silero worker file sits beside the bundle; were it missing, the load would fail and the
  // provider turn to 'none' instead of becoming ready.
  await expect
    .poll(async () => ((await (await fetch(`${server.url}/capabilities`)).json()) as { turn: unknown }).turn, { timeout: 15_000, interval: 250 })
    .toEqual({ provider: 'silero', ready: true });
  const health = (await (await fetch(`${server.url}/health`)).json()) as { turn_configured: boolean };
  expect(health.turn_configured).toBe(true);
  const testPage = await fetch(`${server.url}/test`);
  expect(testPage.status).toBe(200);
  expect(await testPage.text()).toContain('<html');
  const studio = await fetch(`${server.url}/`);
  expect([200, 503]).toContain(studio.status); // 503 names the missing studio build, never a crash
  expect(studio.headers.get('content-type')).toContain('text/html');
});
