// The server for the studio's browser tests: startTestServer, serving a snapshot of the studio's
// build copied when the server starts. On a machine where someone else builds the studio while
// the tests run, Vite empties and rewrites dist/renderer at any moment; the server lists its
// files at start, so the page would ask for assets that no longer exist.
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../server/config.ts';
import { afterAll, beforeAll, inject } from 'vitest';
import { startSharedTestServer, startTestServer, type TestServer } from '../support/server.ts';
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
 * The screens server this worker's suites share (studioSuite): one per test worker, not one per
 * file. A worker runs a dozen of these files in turn (vitest.config.ts: isolate false), and each
 * would otherwise copy the studio's build and start a server that loads the voice stack. Every
 * suite signs up an account of its own, and what the studio shows is the account's (flows,
 * sessions, numbers, settings), so the files cannot see each other; a suite that needs a server
 * of its own asks for one (`studioSuite({ ownServer: true })`, or startScreensServer).
 * It closes once no suite has used it for IDLE_CLOSE_MS, and removes its folder. Vitest may stop
 * the worker before that (SIGTERM, then SIGKILL half a second later) while the server is still
 * saving, and a save makes its data folder again: so the folder is made inside one that the e2e
 * project's globalSetup owns and removes after every worker has stopped (support/global-setup.ts).
 */
interface SharedServer {
  server: Promise<TestServer>;
  users: number;
  idle?: NodeJS.Timeout;
}
let shared: SharedServer | null = null;
const IDLE_CLOSE_MS = 5_000;

function sharedScreensServer(): { server: Promise<TestServer>; release(): void } {
  if (!shared) {
    const entry: SharedServer = {
      users: 0,
      server: (async () => {
        const home = await mkdtemp(join(inject('voxflowE2eServersDir'), 'server-'));
        const server = await (async () => {
          const studioDir = join(home, 'studio');
          await snapshotStudio(studioDir);
          return startSharedTestServer({ dataDir: join(home, 'data') }, { studioDir, voice: true });
        })().catch(async (error: unknown) => {
          await rm(home, { recursive: true, force: true });
          throw error;
        });
        return {
          ...server,
          async close() {
            await server.close();
            await rm(home, { recursive: true, force: true });
          },
        };
      })(),
    };
    entry.server.catch(() => {
      if (shared === entry) shared = null;
    });
    shared = entry;
  }
  const mine: SharedServer = shared;
  clearTimeout(mine.idle);
  mine.users++;
  return {
    server: mine.server,
    release() {
      if (--mine.users > 0) return;
      mine.idle = setTimeout(() => {
        if (mine.users > 0) return;
        if (shared === mine) shared = null;
        void mine.server.then((server) => server.close()).catch(() => undefined);
      }, IDLE_CLOSE_MS).unref();
    },
  };
}

/**
 * The usual suite setup: Chromium (this worker's shared one) and the worker's shared screens
 * server, with an account of the suite's own, taken before the describe block and given back
 * after it; `ownServer` starts a server for this suite alone. Call inside describe(); the returned
 * function gives the rig in tests. `autosave: false`: the editor's autosave off on every page it
 * opens (turnOffAutosave).
 */
export function studioSuite(options: { ownServer?: boolean; autosave?: boolean } = {}): () => StudioRig {
  let rig: StudioRig | undefined;
  let release: () => Promise<void> | void = () => {};
  beforeAll(async () => {
    if (options.ownServer) {
      rig = await startStudioRig({ server: await startScreensServer(), autosave: options.autosave });
      release = () => rig?.server.close();
      return;
    }
    const taken = sharedScreensServer();
    release = taken.release;
    rig = await startStudioRig({ server: await taken.server, autosave: options.autosave });
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
    await release();
  });
  return () => rig!;
}
