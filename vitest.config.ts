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

/**
 * API tests whose subject the store does not take part in, so a second run on PostgreSQL would
 * repeat the same work and ask nothing new; they were the PostgreSQL project's costliest files
 * (37, 8.5 and 8.2 s of its 178 s, CPU-bound, in a run on 2026-11-27). Their store writes (a flow,
 * an account, a session) are the same writes every other API test makes on PostgreSQL.
 */
const NOT_ABOUT_THE_STORE = new Set<string>([
  // The flow-job worker pool: parsing and editing off the thread that paces audio, its CPU budget,
  // two jobs per account.
  'test/api/flow-uploads-never-stall-the-server.test.ts',
  // scrypt at its production cost and the login queue that keeps it from starving /health.
  'test/api/password-hashing.test.ts',
  // The engine's per-session buckets for typed turns and simulate_tool.
  'test/api/typed-turns-and-simulate-tool-are-rate-limited.test.ts',
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
  'test/store/phone-numbers-credentials-and-calls.test.ts': 'integration',
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
  // The carriers' REST calls and media streams against their fakes on loopback.
  'test/transports/carriers/rest-calls-reach-each-carrier-api.test.ts': 'integration',
  'test/transports/carriers/fake-carriers-speak-to-a-stream-server.test.ts': 'integration',
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
 * The browser files run first, three at a time: each drives Chromium beside a server, which keeps
 * both cores busy (the whole run is CPU-bound on this machine: process accounting counted 586 s of
 * CPU in a 334 s run). The other three projects run after them as one group, five files at a time:
 * many of those files wait on real time (paced audio, idle and session timers, child processes)
 * more than they compute: three at a time left the cores about 30 % idle in that phase (46–85 %
 * busy over its first 80 s, /proc/stat sampled every 2 s).
 */
const GROUP_WORKERS = { browser: 3, rest: 5 } as const;

/**
 * The projects one after another in the queue: a worker keeps its loaded modules only for a next
 * file of the same project (vitest's pool), so mixing projects costs a worker start per switch (a
 * run that mixed them spent 74 s importing modules instead of 50, and ended 8 s later). Within
 * the second group the unit project's CPU-only files run beside the integration project's last,
 * waiting ones, and PostgreSQL's many short API files even out the end.
 */
const PROJECT_ORDER = ['e2e', 'integration', 'unit', 'postgres'];

/**
 * Files that start before the rest of their project, in this order. Vitest runs a project's files
 * largest first when it has no timings cached (a clean clone, CI): a long file that starts late
 * runs alone at the end (the 18 s cost-grows-linearly did, last of the last project). The
 * integration project starts with files that mostly wait (spoken calls in real time, two nodes)
 * beside ones that compute (big flow uploads, killed and restarted servers).
 */
const FIRST = [
  'test/e2e/studio-editor.test.ts',
  'test/e2e/webrtc-guessing-game.test.ts',
  'test/e2e/studio-test-talk.test.ts',
  'test/voice/guessing-game-won-by-voice.test.ts',
  'test/server/two-nodes-over-http.test.ts',
  'test/api/flow-uploads-never-stall-the-server.test.ts',
  'test/voice/flow-state-entry-and-idle.test.ts',
  'test/server/webhook-delivery-survives-sigkill.test.ts',
  'test/server/voxflow-test-command.test.ts',
  'test/api/sessions-end-when-idle-or-too-long.test.ts',
  'test/voice/guessing-game-suite-audio-mode.test.ts',
  'test/flow/parse-never-throws.property.test.ts',
  'test/flow/cost-grows-linearly.test.ts',
  'test/flow/yaml-edit/properties.test.ts',
  'test/providers/turn-silero-detectors-keep-their-own-state.test.ts',
];

for (const file of [...FIRST, ...EMBEDDED_STORE_ONLY, ...NOT_ABOUT_THE_STORE]) {
  if (!Object.values(files).some((list) => list.includes(file))) throw new Error(`vitest.config.ts names ${file}, which is no test file`);
}

/** The projects in PROJECT_ORDER; in each, FIRST in its order, then vitest's order. */
class SlowFilesFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(specs);
    const rank = (spec: TestSpecification) => {
      const at = FIRST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return at === -1 ? FIRST.length : at;
    };
    const project = (spec: TestSpecification) => PROJECT_ORDER.indexOf(spec.project.name);
    const position = new Map(sorted.map((spec, i) => [spec, i]));
    return [...sorted].sort((a, b) => project(a) - project(b) || rank(a) - rank(b) || position.get(a)! - position.get(b)!);
  }
}

/** A project in the second group: five files at a time, after the browser files. */
const REST = { maxWorkers: GROUP_WORKERS.rest, sequence: { groupOrder: 1 } };

export default defineConfig({
  test: {
    environment: 'node',
    sequence: { sequencer: SlowFilesFirst },
    // Files at a time: GROUP_WORKERS above. Measured on this 2-core machine, one quiet run each
    // (vitest's duration, 2026-11-27): each project three at a time, one after another, 299 s;
    // integration at four 291 s; integration at five and PostgreSQL's API files at four 279 s;
    // the second group as one, five at a time in PROJECT_ORDER, 264 s. More than three browser
    // files at once only queue for the cores. `--maxWorkers` on the command line does not reach
    // the projects; each names its own (a group's projects must agree).
    maxWorkers: GROUP_WORKERS.browser,
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
      { extends: true, test: { name: 'unit', include: files.unit, testTimeout: 60_000, ...REST } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: files.integration,
          ...REST,
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
          ...REST,
          include: files.integration.filter((file) => file.startsWith('test/api/') && !EMBEDDED_STORE_ONLY.has(file) && !NOT_ABOUT_THE_STORE.has(file)),
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
