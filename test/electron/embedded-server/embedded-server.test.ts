// The desktop's embedded server: on loopback only, on a port the OS picks, with its data in the
// app's user-data folder, whatever the launching shell exported for headless hosting.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedServerConfig, startEmbeddedServer, type EmbeddedServer } from '../../../electron/server-host.ts';
import { SNAPSHOT_FILE } from '../../../server/store/sqljs/database.ts';
import { LOCK_FILE } from '../../../server/store/sqljs/lockfile.ts';
import { StoreLockedError } from '../../../server/store/store.ts';

const QUIET = { VOXFLOW_LOG_LEVEL: 'silent' };
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function userDataFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-userdata-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function start(userData: string, env: NodeJS.ProcessEnv = QUIET): Promise<EmbeddedServer> {
  const server = await startEmbeddedServer(userData, env, { announce: () => {} });
  cleanups.push(() => server.close());
  return server;
}

describe('the embedded server', () => {
  it('listens on 127.0.0.1 at a free port, keeps its data in <userData>/data, and its URL is the studio origin', async () => {
    const userData = await userDataFolder();
    const server = await start(userData);
    const url = new URL(server.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(Number(url.port)).toBeGreaterThan(0);
    expect(server.origin).toBe(`http://127.0.0.1:${url.port}`);
    expect(server.address).toBe(server.origin);
    expect(server.config.dataDir).toBe(join(userData, 'data'));
    expect(existsSync(join(userData, 'data', LOCK_FILE))).toBe(true);
    const health = await fetch(`${server.origin}/health`);
    expect(health.status).toBe(200);
    // Session URLs handed to clients point at the real port, not port 0.
    expect(server.app.services.publicUrl()).toBe(server.origin);
  });

  it('runs beside another copy on the same machine: each gets its own port', async () => {
    const [a, b] = await Promise.all([start(await userDataFolder()), start(await userDataFolder())]);
    expect(a.origin).not.toBe(b.origin);
  });

  it('ignores the headless host, port, data and public URL settings, but takes the provider settings', async () => {
    const userData = '/home/me/.config/Voxflow';
    const config = embeddedServerConfig(userData, {
      VOXFLOW_HOST: '0.0.0.0',
      VOXFLOW_PORT: '8787',
      VOXFLOW_DATA_DIR: '/var/lib/voxflow',
      VOXFLOW_PUBLIC_URL: 'https://voice.example.com',
      VOXFLOW_LLM_PROVIDER: 'openai',
      VOXFLOW_LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
      VOXFLOW_LANGUAGE: 'de',
    });
    expect(config).toMatchObject({ host: '127.0.0.1', port: 0, dataDir: join(userData, 'data') });
    // No public URL of its own: clients reach the app at the loopback address it listens on.
    expect(config.publicUrl).toBeUndefined();
    expect(config.providers.llm).toMatchObject({ provider: 'openai', baseUrl: 'http://127.0.0.1:11434/v1' });
    expect(config.engine.language).toBe('de');
  });

  it('refuses to start on a data folder another Voxflow holds, saying so', async () => {
    const userData = await userDataFolder();
    await start(userData);
    const second = startEmbeddedServer(userData, QUIET, { announce: () => {} });
    await expect(second).rejects.toBeInstanceOf(StoreLockedError);
    await expect(second).rejects.toThrow(/in use by another Voxflow process/);
  });

  it('flushes the store and releases the folder when closed, so the next start opens it', async () => {
    const userData = await userDataFolder();
    const first = await startEmbeddedServer(userData, QUIET, { announce: () => {} });
    await first.close();
    await first.close();
    expect(existsSync(join(userData, 'data', SNAPSHOT_FILE))).toBe(true);
    expect(existsSync(join(userData, 'data', LOCK_FILE))).toBe(false);
    const again = await start(userData);
    expect((await fetch(`${again.origin}/health`)).status).toBe(200);
  });
});
