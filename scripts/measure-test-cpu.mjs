// Measures what test files cost: each file (or folder) is run alone through scripts/run-tests.mjs
// in a cgroup of its own (cgroup v1 cpuacct, so run as root), which counts every process the run
// starts: vitest, its workers, the servers they spawn, PostgreSQL, sipp, Chromium (also the
// orphans vitest's SIGKILL leaves to init, which /usr/bin/time misses). Prints, per file: its
// wall time, its CPU time (user + system), the CPU of the project's fixed costs measured alone
// (vitest's start and the project's globalSetup: `--baseline`), the load average before and
// after, and the share of the wall time spent waiting rather than computing.
//
//   node scripts/measure-test-cpu.mjs [--baseline] <project>:<file or folder> ... [-- <vitest options>]
//   e.g. node scripts/measure-test-cpu.mjs integration:test/server/two-nodes-over-http.test.ts
//
// The run's own output goes to <tmp>/measure-test-cpu-<n>.log; a failing file is reported, not
// hidden. CPU time is steadier than wall time on a loaded machine but not load-free (see
// docs/testing.md): compare figures taken at a similar load.
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const CPUACCT = '/sys/fs/cgroup/cpuacct';
const NS_PER_S = 1e9;
// What follows `--` goes to vitest as it is, for each file (to compare a setting).
const dashes = process.argv.indexOf('--');
const args = dashes === -1 ? process.argv.slice(2) : process.argv.slice(2, dashes);
const vitestExtra = dashes === -1 ? [] : process.argv.slice(dashes + 1);
const baseline = args.includes('--baseline');
const targets = args.filter((a) => a !== '--baseline');
if (targets.length === 0 && !baseline) {
  process.stderr.write('usage: node scripts/measure-test-cpu.mjs [--baseline] <project>:<file or folder> ...\n');
  process.exit(2);
}
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

/** Runs `node scripts/run-tests.mjs <vitestArgs>` in a fresh cgroup; its CPU in seconds. */
let runs = 0;
async function measure(name, vitestArgs) {
  const tag = `${process.pid}-${++runs}-${name.replace(/[^\w.-]+/g, '_').slice(-60)}`;
  const group = join(CPUACCT, `voxflow-measure-${tag}`);
  await mkdir(group);
  const log = join(tmpdir(), `measure-test-cpu-${tag}.log`);
  const loadBefore = load();
  const started = process.hrtime.bigint();
  // The shell joins the cgroup before it execs node, so every descendant is counted from its start.
  const child = spawn('sh', ['-c', `echo $$ > ${group}/cgroup.procs && exec node scripts/run-tests.mjs "$@" > ${log} 2>&1`, 'sh', ...vitestArgs], { stdio: 'ignore' });
  const samples = [];
  const sampler = setInterval(() => void sample(group).then((x) => samples.push(x), () => {}), SAMPLE_MS);
  const code = await new Promise((resolve) => child.once('exit', (c, s) => resolve(c ?? s)));
  clearInterval(sampler);
  const wall = Number(process.hrtime.bigint() - started) / NS_PER_S;
  // What the run left (a Chromium reaped late) still counts: give it a moment to end.
  for (let i = 0; i < 50; i++) {
    const tasks = (await readFile(join(group, 'tasks'), 'utf8')).trim();
    if (!tasks) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const user = Number(await readFile(join(group, 'cpuacct.usage_user'), 'utf8')) / NS_PER_S;
  const sys = Number(await readFile(join(group, 'cpuacct.usage_sys'), 'utf8')) / NS_PER_S;
  await rmdir(group).catch(() => {});
  await writeFile(`${log}.samples.tsv`, ['seconds\trun cores\tidle cores\tload', ...rates(samples).map((r) => r.join('\t'))].join('\n') + '\n');
  return { name, code, wall, cpu: user + sys, user, sys, loadBefore, loadAfter: load(), log, samples: rates(samples) };
}

/**
 * Every SAMPLE_MS: the run's CPU (its cgroup) and the machine's idle time (/proc/stat's idle and
 * iowait, over every core). Between two samples these say how many cores the run used and how
 * many nobody used: a run that waits on real time with cores idle beside it could run more files
 * at once.
 */
const SAMPLE_MS = 2_000;
async function sample(group) {
  const usage = Number(await readFile(join(group, 'cpuacct.usage'), 'utf8')) / NS_PER_S;
  const cpuLine = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // USER_HZ is 100 on Linux: /proc/stat counts hundredths of a second.
  const idle = (cpuLine[3] + cpuLine[4]) / 100;
  return { at: Number(process.hrtime.bigint()) / NS_PER_S, usage, idle, load: loadavg()[0] };
}
function rates(samples) {
  return samples.slice(1).map((b, i) => {
    const a = samples[i];
    const dt = b.at - a.at;
    return [(b.at - samples[0].at).toFixed(0), ((b.usage - a.usage) / dt).toFixed(2), ((b.idle - a.idle) / dt).toFixed(2), b.load.toFixed(1)];
  });
}

const rows = [];
const mean = (xs) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const print = (r, fixed) => {
  const own = fixed === undefined ? r.cpu : r.cpu - fixed;
  // Two cores: a file that kept one core busy for its whole wall time used wall × 1 of CPU.
  const waiting = Math.max(0, 1 - own / r.wall);
  process.stdout.write(`${r.name}\texit ${r.code}\twall ${r.wall.toFixed(1)} s\tcpu ${r.cpu.toFixed(1)} s (user ${r.user.toFixed(1)}, sys ${r.sys.toFixed(1)})` +
    `${fixed === undefined ? '' : `\tless fixed ${own.toFixed(1)} s`}\twaiting ${(waiting * 100).toFixed(0)} %\tload ${r.loadBefore} → ${r.loadAfter}` +
    `\tmean idle ${mean(r.samples.map((x) => Number(x[2]))).toFixed(2)} cores\t${r.log}\n`);
};
const fixedByProject = {};
if (baseline) {
  // A project's fixed costs: vitest, its globalSetup (the bundle check, a PostgreSQL cluster) and
  // one trivial file of the project, which also pays a worker's start.
  // The probe sits in a folder the project runs (vitest.config.ts lists files when it loads).
  const folderOf = { unit: 'architecture', integration: 'server', postgres: 'api', e2e: 'e2e' };
  for (const project of new Set(targets.map((t) => t.split(':')[0]))) {
    const probe = join('test', folderOf[project], `measure-baseline-${process.pid}.test.ts`);
    await writeFile(probe, "import { expect, test } from 'vitest';\ntest('nothing', () => expect(1).toBe(1));\n");
    try {
      const r = await measure(`baseline-${project}`, ['--project', project, probe, ...vitestExtra]);
      fixedByProject[project] = r.cpu;
      print(r);
    } finally {
      await rm(probe, { force: true });
    }
  }
}
for (const target of targets) {
  const [project, path] = target.split(':');
  const r = await measure(`${project}:${path}`, ['--project', project, path, ...vitestExtra]);
  rows.push(r);
  print(r, fixedByProject[project]);
}
