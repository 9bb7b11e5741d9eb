// The server for the studio's browser tests: startTestServer, serving a snapshot of the studio's
// build copied when the server starts. On a machine where someone else builds the studio while
// the tests run, Vite empties and rewrites dist/renderer at any moment; the server lists its
// files at start, so the page would ask for assets that no longer exist.
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../server/config.ts';
import { afterAll, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

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
  const studioDir = await mkdtemp(join(tmpdir(), 'voxflow-studio-'));
  await snapshotStudio(studioDir);
  // The studio as a user meets it: the server hears voice and says so on /capabilities.
  const server = await startTestServer(overrides, { studioDir, voice: true });
  return {
    ...server,
    async close() {
      await server.close();
      await rm(studioDir, { recursive: true, force: true });
    },
  };
}

/**
 * The usual suite setup: Chromium and a screens server started once for the describe block and
 * closed after it. Call inside describe(); the returned function gives the rig in tests.
 * `autosave: false`: the editor's autosave off on every page it opens (turnOffAutosave).
 */
export function studioSuite(options: { autosave?: boolean } = {}): () => StudioRig {
  let rig: StudioRig | undefined;
  beforeAll(async () => {
    rig = await startStudioRig({ server: await startScreensServer(), ...options });
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
    await rig?.server.close();
  });
  return () => rig!;
}
