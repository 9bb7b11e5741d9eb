// On a full disk every write is a 503; /health must say so too, with 503 and
// store_writable: false, so a load balancer or a monitor takes the node out instead of reading ok.
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JOURNAL_FILE } from '../../../server/store/sqljs/database.ts';
import { startTestServer, type TestServer } from '../../support/server.ts';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close().catch(() => {})));
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

// /dev/full accepts an open and fails every write with ENOSPC: a full disk, for real.
describe.runIf(existsSync('/dev/full'))('/health on a full disk', () => {
  it('answers 503 degraded with store_writable false once a write has failed, and 200 ok before', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-full-'));
    dirs.push(dataDir);
    await symlink('/dev/full', join(dataDir, JOURNAL_FILE));
    const deviceMode = (await stat('/dev/full')).mode;
    const server = await startTestServer({ dataDir });
    servers.push(server);

    const before = await server.request('GET', '/health');
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ status: 'ok', store_writable: true });

    const signup = await server.request('POST', '/auth/signup', { body: { email: 'full@example.com', password: 'correct horse battery staple' } });
    expect(signup.status).toBe(503);
    expect(signup.body.error.code).toBe('store_unavailable');

    const after = await server.request('GET', '/health');
    expect(after.status).toBe(503);
    expect(after.body).toMatchObject({ status: 'degraded', store_writable: false, service: 'voxflow', problems: ['the store refuses writes'] });
    // Making the data dir private never touches what a symlink in it points at.
    expect((await lstat(join(dataDir, JOURNAL_FILE))).isSymbolicLink()).toBe(true);
    expect((await stat('/dev/full')).mode).toBe(deviceMode);
  });
});
