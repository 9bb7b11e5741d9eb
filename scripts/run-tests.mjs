// `npm test`: runs vitest with a temp folder of this run's own, and fails the run if a test left
// anything in it. Every test cleans up what it made, even when it fails (data dirs, PostgreSQL
// clusters, recordings, browser profiles); without this check, leftovers piled up unnoticed in
// /tmp at about thirty folders a run. A folder of its own also keeps two runs side by side from
// seeing each other's files. Arguments are passed to `vitest run`.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, statfs, symlink } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const runDir = await mkdtemp(join(tmpdir(), 'voxflow-test-run-'));
// Like /tmp itself: the PostgreSQL clusters run as the postgres user and make folders here too.
await chmod(runDir, 0o1777);
// tsx keeps its compile cache in the temp folder (tsx-<uid>): the run's folder points at the
// usual one, so the tests that start the server from its sources (through tsx) do not each
// recompile it cold, which took over 30 s beside a second run.
const tsxCache = `tsx-${userInfo().uid}`;
await mkdir(join(tmpdir(), tsxCache), { recursive: true, mode: 0o700 });
await symlink(join(tmpdir(), tsxCache), join(runDir, tsxCache));

// The runtime folder (XDG_RUNTIME_DIR) is the run's too. Without one, PulseAudio's client library
// in Chromium makes a pulse-XXXXXX folder in the temp folder and points a link in
// ~/.config/pulse at it, a folder that outlives the browser's tests.
const runtimeDir = join(runDir, 'xdg-runtime');
await mkdir(runtimeDir, { mode: 0o700 });

// A second folder of the run's own, in memory (tmpfs), for the PostgreSQL clusters that do not
// sync (test/support/postgres.ts says why: file creation on this machine's disk costs CPU). Only
// when /dev/shm has room for them (the clusters, their databases and WAL: well under a gigabyte);
// else they stay in the run's folder.
const MEMORY_ROOM = 2 * 1024 ** 3;
const memoryDir = await (async () => {
  try {
    const fs = await statfs('/dev/shm');
    if (fs.bavail * fs.bsize < MEMORY_ROOM) return null;
    const dir = await mkdtemp('/dev/shm/voxflow-test-run-');
    await chmod(dir, 0o1777);
    return dir;
  } catch {
    return null;
  }
})();
const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, TMPDIR: runDir, XDG_RUNTIME_DIR: runtimeDir, ...(memoryDir ? { TEST_TMPFS_DIR: memoryDir } : {}) },
});
let stoppedBy = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stoppedBy = signal;
    child.kill(signal);
  });
}
const code = await new Promise((resolve) => child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));

/**
 * Processes still running from inside the run's folder: PostgreSQL clusters (started as the
 * postgres user, so they outlive the workers that started them) and browsers. A run stopped
 * with Ctrl+C or SIGTERM ends before the tests' own clean-ups; left alone, each cluster would
 * keep running on a deleted folder. PostgreSQL takes SIGINT as "fast shutdown".
 */
async function stopWhatRunsIn(dir) {
  const stopped = [];
  for (const entry of await readdir('/proc').catch(() => [])) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(dir)) continue;
    const command = cmdline.split('\0').filter(Boolean);
    try {
      process.kill(pid, /postgres/.test(command[0] ?? '') ? 'SIGINT' : 'SIGTERM');
      // The shared browser may outlive the last test file (see KEPT_FOR_THE_RUN below): expected.
      if (!/chrom/.test(command[0] ?? '')) stopped.push(`${pid} ${command.slice(0, 3).join(' ').slice(0, 120)}`);
    } catch {
      // Gone already, or a child the parent just stopped.
    }
  }
  await new Promise((resolve) => setTimeout(resolve, stopped.length > 0 ? 2_000 : 200));
  return stopped;
}
const stillRunning = [...(await stopWhatRunsIn(runDir)), ...(memoryDir ? await stopWhatRunsIn(memoryDir) : [])];
if (stillRunning.length > 0 && !stoppedBy) {
  process.stderr.write(`\nThe tests left ${stillRunning.length} process(es) running (stopped now):\n${stillRunning.map((line) => `  ${line}`).join('\n')}\n`);
}

/**
 * What a run keeps on purpose until it ends, removed with the run's folder: tsx's compile cache
 * (tsx-<uid>), the runtime folder, and what the browser tests' shared Chromium keeps while it runs: the microphone
 * recordings handed to it (one folder for the whole run), and Playwright's profile and artifacts
 * folders of each launch. A worker's browser serves its files in turn and quits a few seconds
 * after the last; when the run ends first, the worker is stopped with it still open, so no test
 * can remove those.
 */
const KEPT_FOR_THE_RUN = [/^tsx-\d+$/, /^xdg-runtime$/, /^voxflow-e2e-mics$/, /^playwright_chromiumdev_profile-/, /^playwright-artifacts-/];
const left = [
  ...(await readdir(runDir).catch(() => [])).filter((name) => !KEPT_FOR_THE_RUN.some((kept) => kept.test(name))),
  ...(memoryDir ? (await readdir(memoryDir).catch(() => [])).map((name) => join(memoryDir, name)) : []),
];
await rm(runDir, { recursive: true, force: true });
if (memoryDir) await rm(memoryDir, { recursive: true, force: true });
// A run stopped by hand ends before its tests clean up: what it left is not the tests' fault.
if (stoppedBy) process.exit(code || 1);
if (stillRunning.length > 0 && left.length === 0) process.exit(code || 1);
if (left.length > 0) {
  process.stderr.write(`\nThe tests left ${left.length} thing(s) in the temp folder (each test must remove what it makes, even when it fails):\n${left.map((name) => `  ${name}`).join('\n')}\n`);
  process.exit(code || 1);
}
process.exit(code);
