import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Three projects, chosen by what a test file does, not only where it lives:
// - unit: pure and in-process (worker threads allowed); opens no socket, spawns no process.
// - integration: real HTTP/WebSocket servers, provider fakes over sockets, child processes, crashes.
// - e2e: Debian Chromium against a real server; only these need the studio built.
// `npm test` runs all three; `npm run test:unit` (test:integration, test:e2e) runs one.
type Project = 'unit' | 'integration' | 'e2e';

/**
 * API tests that are about the embedded store itself (its data folder, journal, migrations of
 * an old data dir), so they do not run again in the postgres project.
 */
const EMBEDDED_STORE_ONLY = new Set<string>([
  'test/api/flow-versions-migration-keeps-flows-and-sessions.test.ts',
  // A failing journal write (a full disk) and a second process on one data dir: the embedded store's.
  'test/api/health-says-when-the-store-refuses-writes.test.ts',
  'test/api/server-main.test.ts',
]);

const BY_FOLDER: Record<string, Project> = {
  architecture: 'unit',
  audio: 'unit',
  electron: 'unit',
  engine: 'unit',
  flow: 'unit',
  renderer: 'unit',
  store: 'unit',
  // The flow-test runner's scripted runs: a session in this process, no socket.
  testing: 'unit',
  transports: 'unit',
  api: 'integration',
  providers: 'integration',
  server: 'integration',
  voice: 'integration',
  e2e: 'e2e',
};

/** Files whose folder says otherwise. */
const BY_FILE: Record<string, Project> = {
  // Child processes: a writer killed mid-write, a lock held by another process.
  'test/store/crash-kill.test.ts': 'integration',
  'test/store/lock.test.ts': 'integration',
  'test/store/lock-names-its-owner.test.ts': 'integration',
  // A real PostgreSQL (a child process, over TCP) shared by two pools, as two nodes share it.
  'test/store/postgres-two-nodes-outbox.test.ts': 'integration',
  'test/store/postgres-two-nodes-publish.test.ts': 'integration',
  // The repository tests run against both stores: sql.js and a real PostgreSQL (both-stores.ts).
  'test/store/credits-ledger.test.ts': 'integration',
  'test/store/repositories.test.ts': 'integration',
  'test/store/session-claim.test.ts': 'integration',
  'test/store/flow-versions.test.ts': 'integration',
  'test/store/retention-forgets-old-timelines.test.ts': 'integration',
  'test/store/webhook-outbox.test.ts': 'integration',
  'test/store/flow-storage-usage.test.ts': 'integration',
  'test/store/flow-tests-and-runs.test.ts': 'integration',
  'test/store/postgres-database.test.ts': 'integration',
  'test/store/postgres-two-nodes-accounts.test.ts': 'integration',
  'test/store/postgres-two-nodes-ledger.test.ts': 'integration',
  'test/store/postgres-two-nodes-sessions.test.ts': 'integration',
  // Two servers (and a killed child process) on one real PostgreSQL, over HTTP and WebSockets.
  'test/server/two-nodes-over-http.test.ts': 'integration',
  // voxflow migrate-store: a data dir made by test servers, copied into a real PostgreSQL.
  'test/store/migrate-store.test.ts': 'integration',
  // The desktop's server listening on a port, or run as a child process.
  'test/electron/bundled-serve.test.ts': 'integration',
  'test/electron/embedded-server.test.ts': 'integration',
  'test/electron/local-sign-in.test.ts': 'integration',
  'test/electron/serve-headless.test.ts': 'integration',
  // The embedded engines in worker threads of this process, no sockets: flite and Silero.
  'test/providers/tts-flite-concurrent-synths-do-not-mix.test.ts': 'unit',
  'test/providers/tts-flite-keeps-event-loop-free.test.ts': 'unit',
  'test/providers/tts-flite-speaks-a-sentence.test.ts': 'unit',
  'test/providers/tts-flite-text-preparation.test.ts': 'unit',
  'test/providers/tts-flite-worker-crash.test.ts': 'unit',
  'test/providers/turn-silero-detectors-keep-their-own-state.test.ts': 'unit',
  // The settings table, --help and the README: pure.
  'test/server/settings-table.test.ts': 'unit',
  // Offers from werift in Node over HTTP: no browser.
  'test/e2e/webrtc-offer-errors.test.ts': 'integration',
  'test/e2e/webrtc-pc-id-is-not-a-credential.test.ts': 'integration',
};

const ROOT = fileURLToPath(new URL('./', import.meta.url));

/** Every test file, by project. A file in a folder nobody placed stops the run instead of silently not running. */
function testFilesByProject(): Record<Project, string[]> {
  const files = readdirSync(`${ROOT}test`, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.test.ts'))
    .map((path) => `test/${path.split('\\').join('/')}`)
    .sort();
  const out: Record<Project, string[]> = { unit: [], integration: [], e2e: [] };
  for (const file of files) {
    const project = BY_FILE[file] ?? BY_FOLDER[file.split('/')[1]!];
    if (!project) throw new Error(`${file}: say which project it belongs to in vitest.config.ts (BY_FOLDER or BY_FILE)`);
    out[project].push(file);
  }
  for (const file of Object.keys(BY_FILE)) {
    if (!files.includes(file)) throw new Error(`vitest.config.ts names ${file}, which does not exist`);
  }
  return out;
}

const files = testFilesByProject();

/**
 * Files that take far longer than their project's others (the slowest of each project in a quiet
 * run). Vitest runs a project's files largest first when it has no timings cached (a clean clone,
 * CI), and the unit project comes last: there the 18 s cost-grows-linearly, a small file, started
 * last and ran alone at the end of the whole run. Named here, they start first in their project.
 */
const SLOW_FILES = [
  'test/flow/cost-grows-linearly.test.ts',
  'test/flow/parse-never-throws.property.test.ts',
  'test/providers/turn-silero-detectors-keep-their-own-state.test.ts',
  'test/flow/yaml-edit/properties.test.ts',
  'test/e2e/studio-editor.test.ts',
  'test/e2e/webrtc-guessing-game.test.ts',
  'test/e2e/studio-test-talk.test.ts',
  'test/server/two-nodes-over-http.test.ts',
  'test/voice/guessing-game-won-by-voice.test.ts',
  'test/server/voxflow-test-command.test.ts',
  'test/voice/flow-state-entry-and-idle.test.ts',
  'test/api/sessions-end-when-idle-or-too-long.test.ts',
];

/** Vitest's order (one project after another, so a worker keeps its loaded modules), with SLOW_FILES first in each project. */
class SlowFilesFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(specs);
    const projects = [...new Set(sorted.map((spec) => spec.project.name))];
    const rank = (spec: TestSpecification) => {
      const at = SLOW_FILES.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return at === -1 ? SLOW_FILES.length : at;
    };
    const position = new Map(sorted.map((spec, i) => [spec, i]));
    return [...sorted].sort(
      (a, b) => projects.indexOf(a.project.name) - projects.indexOf(b.project.name) || rank(a) - rank(b) || position.get(a)! - position.get(b)!,
    );
  }
}

export default defineConfig({
  test: {
    environment: 'node',
    sequence: { sequencer: SlowFilesFirst },
    // Three files at a time on this 2-core machine (vitest's default here is one: cores − 1). Most
    // files wait on real time (paced audio, a browser) more than they compute: test/voice alone
    // used 0.55 of a core with two workers. Measured (load 4–7 from other work): test/voice 58 s
    // with 2, 46 s with 3, 41 s with 4; six of the slowest e2e files 70 s → 44 s with 3; test/voice
    // and test/server run twice at once, 150 s with 2 and 136 s with 3, all passing both ways.
    // Three, not four: the real-time tests must stay steady with a second `npm test` beside.
    // The projects copy this value: `--maxWorkers` on the command line does not reach them.
    maxWorkers: 3,
    // Each worker loads the server's modules once, not once per file: per-file isolation cost
    // more than the tests themselves (about 2 s of imports a file). Files clean up after
    // themselves (servers closed, spies and timers restored in their hooks); none mocks modules.
    isolate: false,
    // VOXFLOW_FC_RUNS: how many cases a fast-check property tries (see the file); cleanups that
    // shared helpers schedule for the running test (their own top-level hooks would cover only
    // the first file of each worker: see the file).
    setupFiles: ['test/support/property-runs.ts', 'test/support/after-this-test.ts'],
    // The last reporter prints the closing line `N passed, N failed, N skipped` that CI reads.
    reporters: ['default', './test/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      // Pure work only, so a timeout here guards against a hang, not a slow network: property tests
      // of thousands of cases take 40 s when two runs share the machine's two cores.
      { extends: true, test: { name: 'unit', include: files.unit, testTimeout: 60_000 } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: files.integration,
          // One PostgreSQL cluster for the files that need one, each in databases of its own; the
          // server bundled as `npm run serve` runs it, for the tests that start it as a process.
          globalSetup: ['test/support/shared-postgres.ts', 'test/support/server-bundle.ts'],
        },
      },
      // The API suite again with the store on PostgreSQL (issue 19): every test server gets a
      // database of its own on one cluster started for the run.
      {
        extends: true,
        test: {
          name: 'postgres',
          include: files.integration.filter((file) => file.startsWith('test/api/') && !EMBEDDED_STORE_ONLY.has(file)),
          globalSetup: ['test/support/postgres-global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: files.e2e,
          // The browser tests load the studio from the server: build it (when stale) first.
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
