// The server for the flows, sessions, settings and sign-in browser tests. Two things differ from
// startTestServer's:
// - It serves the built studio explicitly. Run from sources, server/studio.ts findStudioDir()
//   picks `server/../renderer/` (the Vite sources, whose index.html loads /src/main.ts) before
//   dist/renderer, so the page could not start.
// - It serves a snapshot of the build, copied when the server starts. On a shared machine another
//   build can empty and rewrite dist/renderer at any moment (Vite's emptyOutDir); the server
//   lists its files at start, so the page would ask for assets that no longer exist.
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../server/app.ts';
import { makeConfig, type ConfigInput } from '../../server/config.ts';
import type { TestServer } from '../support/server.ts';

const BUILD_DIR = fileURLToPath(new URL('../../dist/renderer/', import.meta.url));

/** A copy of the build whose index.html names only assets that are in the copy. */
async function snapshotStudio(into: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await rm(into, { recursive: true, force: true });
    await cp(BUILD_DIR, into, { recursive: true });
    const html = await readFile(join(into, 'index.html'), 'utf8').catch(() => '');
    const assets = new Set(await readdir(join(into, 'assets')).catch(() => [] as string[]));
    const named = [...html.matchAll(/\/assets\/([^"']+)/g)].map((m) => m[1]!);
    if (html && named.length > 0 && named.every((name) => assets.has(name))) return;
    // Caught mid-build: the build takes seconds, so wait for it to finish and copy again.
    if (attempt === 10) throw new Error(`dist/renderer stayed incomplete: ${BUILD_DIR}`);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  }
}

export async function startScreensServer(overrides: ConfigInput = {}): Promise<TestServer> {
  const root = await mkdtemp(join(tmpdir(), 'voxflow-screens-'));
  const dataDir = join(root, 'data');
  const studioDir = join(root, 'studio');
  await snapshotStudio(studioDir);
  const config = makeConfig({
    host: '127.0.0.1',
    port: 0,
    logLevel: 'silent',
    passwordHashCost: 10,
    rateLimit: { authPerMinute: 10_000, credentialPerMinute: 100_000, ipPerMinute: 100_000 },
    ...overrides,
    dataDir,
  });
  const app = await buildApp(config, { studioDir });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  config.publicUrl = url;
  return {
    app,
    url,
    dataDir,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      let body: string | Buffer | undefined;
      if (options.rawBody !== undefined) body = options.rawBody;
      else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      if (options.jwt) headers.authorization = `Bearer ${options.jwt}`;
      if (options.apiKey) headers['x-service-key'] = options.apiKey;
      const response = await fetch(url + path, { method, headers, body });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    async close() {
      await app.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
