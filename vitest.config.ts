import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { SlowFilesFirst } from './test/support/slow-files-first.ts';

// A test's folder says which project runs it (the deepest folder named here wins):
// - unit: pure and in-process (worker threads allowed); opens no socket, spawns no process.
// - integration: real HTTP/WebSocket servers, provider fakes over sockets, child processes, a real
//   PostgreSQL (store/postgres, store/both-stores: the repositories on sql.js and PostgreSQL).
// - e2e: Debian Chromium against a real server; only these need the studio built.
// - postgres: test/api's and test/phone's own files again with the store on PostgreSQL; their
//   subfolders run once, as a second run would ask nothing new of the store: embedded-store-only,
//   not-about-the-store (worker pool, scrypt, rate limits, headers, the studio's files, bodies
//   refused before any store call, the engine's split of new sessions among an experiment's
//   arms), phone/carrier-protocols (no server), phone/several-nodes (its own nodes on
//   PostgreSQL), phone/other-carriers (a phone file's calls over the carriers its
//   PostgreSQL run leaves out, split off so they run beside it), phone/sip (sipp's calls: the store
//   keeps what a carrier call keeps),
//   phone/not-about-the-store (what is heard on the line: a recording's audio, turn-taking; the
//   store keeps no more of those calls than of any other).
type Project = 'unit' | 'integration' | 'e2e';
const FOLDERS: Record<string, Project> = {
  ...Object.fromEntries(['architecture', 'audio', 'config', 'electron', 'engine', 'flow', 'providers/embedded', 'renderer', 'security', 'store', 'testing', 'transports'].map((f) => [f, 'unit'])),
  ...Object.fromEntries(['api', 'electron/embedded-server', 'observability', 'phone', 'phone/sip', 'providers', 'server', 'store/both-stores', 'store/child-processes', 'store/postgres', 'voice'].map((f) => [f, 'integration'])),
  e2e: 'e2e',
};

/** Every test file by project; a file in a folder nobody placed stops the run instead of silently not running. */
function testFilesByProject(): Record<Project, string[]> {
  const out: Record<Project, string[]> = { unit: [], integration: [], e2e: [] };
  for (const path of readdirSync(fileURLToPath(new URL('./test', import.meta.url)), { recursive: true, encoding: 'utf8' })) {
    if (!path.endsWith('.test.ts')) continue;
    const folders = path.split(/[\\/]/).slice(0, -1);
    const folder = folders.map((_, i) => folders.slice(0, folders.length - i).join('/')).find((f) => f in FOLDERS);
    if (!folder) throw new Error(`test/${path}: place its folder in a project (FOLDERS in vitest.config.ts)`);
    out[FOLDERS[folder]!].push(`test/${folders.join('/')}/${path.split(/[\\/]/).pop()}`);
  }
  return out;
}
const files = testFilesByProject();
/** The server's bundle, built when stale, for the workers of in-process servers and for spawned servers. */
const SERVER_BUNDLE = 'test/support/server-bundle.ts';

/** The second group: seven files at a time (`--maxWorkers` does not reach projects; a group's must agree). */
const REST = { maxWorkers: 7, sequence: { groupOrder: 1 } };

export default defineConfig({
  test: {
    environment: 'node',
    sequence: { sequencer: SlowFilesFirst },
    maxWorkers: 3,
    // Each worker loads the server's modules once, not once per file (about 2 s of imports a file).
    isolate: false,
    // Each project has a Vite server of its own, and each transformed the same sources again; kept
    // on disk (node_modules/.experimental-vitest-cache, keyed by a file's text and the config),
    // a transform serves every project and the next run. A whole run's main process: 24.3 s of
    // CPU from an empty cache (a clean clone: the filling costs what it saves), 9.2 s with the
    // cache kept, 19.4 s without one (docs/testing.md).
    experimental: { fsModuleCache: true },
    setupFiles: ['test/support/property-runs.ts', 'test/support/after-this-test.ts', 'test/support/worker-bundle-env.ts', 'test/support/file-cpu.ts'],
    // The last reporter prints the closing line `N passed, N failed, N skipped` that CI reads.
    reporters: ['default', './test/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 90_000, // hooks start servers, browsers, clusters: waits a loaded machine stretches
    projects: [
      // Every project gets the server's bundle (SERVER_BUNDLE), built once when its sources changed:
      // the servers the tests start run their flow-job and store workers from it, not through tsx.
      // Pure work only: the long timeout lets big property tests finish when the cores are shared.
      { extends: true, test: { name: 'unit', include: files.unit, testTimeout: 120_000, ...REST, globalSetup: [SERVER_BUNDLE] } },
      // One PostgreSQL cluster for the files that need one; the bundle also for those that spawn the server.
      { extends: true, test: { name: 'integration', include: files.integration, ...REST, globalSetup: ['test/support/shared-postgres.ts', SERVER_BUNDLE] } },
      { extends: true, test: { name: 'postgres', include: ['test/api/*.test.ts', 'test/phone/*.test.ts'], ...REST, globalSetup: ['test/support/postgres-global-setup.ts', SERVER_BUNDLE] } },
      // The browser tests load the studio from the server: build it (when stale) first.
      { extends: true, test: { name: 'e2e', include: files.e2e, globalSetup: ['test/support/global-setup.ts', SERVER_BUNDLE] } },
    ],
  },
});
