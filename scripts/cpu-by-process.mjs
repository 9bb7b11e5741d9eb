// Where a command's CPU goes, by kind of process: runs the command in a cgroup of its own (cgroup
// v1 cpuacct, so as root; see docs/testing.md, "Where the suite's CPU goes") and every 250 ms reads
// each of the group's processes from /proc (CPU so far, command line). At the end it prints the CPU
// of each kind (vitest's main process, its workers, the servers tests spawn, Chromium's renderers,
// GPU and browser processes, PostgreSQL and its backends too short-lived to read, the SIP peers,
// …), the count of processes of each, and the group's own total: what other processes used
// between their last read and their end is in the total only.
//
//   node scripts/cpu-by-process.mjs [--out FILE.tsv] -- npm test
//
// A process's figure is its CPU when last read, so one that ends between reads loses at most its
// last 250 ms.
import { spawn } from 'node:child_process';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';

const CPUACCT = '/sys/fs/cgroup/cpuacct';
const SAMPLE_MS = 250;
const TICKS = 100; // USER_HZ: /proc/<pid>/stat counts hundredths of a second

const dashes = process.argv.indexOf('--');
if (dashes === -1 || dashes === process.argv.length - 1) {
  process.stderr.write('usage: node scripts/cpu-by-process.mjs [--out FILE.tsv] -- <command> [args…]\n');
  process.exit(2);
}
const own = process.argv.slice(2, dashes);
const outAt = own.indexOf('--out');
const out = outAt === -1 ? null : own[outAt + 1];
const command = process.argv.slice(dashes + 1);

/** The kind of a process, from its command line. */
function kindOf(cmdline, comm) {
  const line = cmdline.replaceAll('\0', ' ');
  if (/chrom/i.test(comm) || /chrom(e|ium)/i.test(line.split(' ')[0] ?? '')) {
    const type = /--type=([\w-]+)/.exec(line)?.[1];
    return `chromium ${type ?? 'browser'}`;
  }
  if (/^postgres|^postmaster/.test(comm) || /\/postgres\b/.test(line)) return 'postgresql';
  for (const name of ['sipp', 'baresip', 'kamailio', 'prometheus', 'espeak-ng', 'sox', 'initdb', 'pg_ctl']) if (comm.startsWith(name.slice(0, 15))) return name;
  if (/node/.test(comm) || /\bnode\b/.test(line.split(' ')[0] ?? '')) {
    if (/vitest[/\\]dist[/\\]workers|vitest[/\\]dist[/\\].*(forks|threads)/.test(line)) return 'node: vitest worker';
    if (/vitest/.test(line)) return 'node: vitest main';
    if (/\.server-test|dist[/\\]server|main\.mjs|voxflow\.mjs|server[/\\]main\.ts/.test(line)) return 'node: spawned server';
    if (/run-tests\.mjs/.test(line)) return 'node: run-tests';
    if (/tsx/.test(line)) return 'node: tsx script';
    if (/\.test-scripts/.test(line)) return 'node: bundled test script';
    return 'node: other';
  }
  if (comm === 'sh' || comm === 'bash' || comm === 'npm') return 'shell, npm';
  return `other (${comm})`;
}

const group = join(CPUACCT, `voxflow-cpu-by-process-${process.pid}`);
await mkdir(group);
const loadBefore = loadavg()[0];
const started = Date.now();
const child = spawn('sh', ['-c', `echo $$ > ${group}/cgroup.procs && exec "$@"`, 'sh', ...command], { stdio: 'inherit' });

/** Per process (pid and start time, since pids come round again): its kind and CPU when last read. */
const seen = new Map();
async function sample() {
  const pids = (await readFile(join(group, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean);
  await Promise.all(
    pids.map(async (pid) => {
      try {
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        // comm may hold spaces and parentheses: the fields after it follow the last ')'.
        const close = stat.lastIndexOf(')');
        const comm = stat.slice(stat.indexOf('(') + 1, close);
        const fields = stat.slice(close + 2).split(' ');
        const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS;
        const key = `${pid}:${fields[19]}`;
        let entry = seen.get(key);
        if (!entry) {
          const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
          entry = { kind: kindOf(cmdline, comm), cpu: 0, reaped: 0, pid: Number(pid), parent: Number(fields[1]) };
          seen.set(key, entry);
        }
        entry.cpu = Math.max(entry.cpu, cpu);
        // What its children used, counted once the process waited for them (cutime, cstime).
        entry.reaped = Math.max(entry.reaped, (Number(fields[13]) + Number(fields[14])) / TICKS);
      } catch {
        // ended between the list and the read
      }
    }),
  );
}
const timer = setInterval(() => void sample(), SAMPLE_MS);
const code = await new Promise((resolve) => child.once('exit', (c, s) => resolve(c ?? s)));
clearInterval(timer);
// What the run left (a Chromium reaped late) still counts: give it a moment to end.
for (let i = 0; i < 50; i++) {
  await sample();
  if (!(await readFile(join(group, 'cgroup.procs'), 'utf8')).trim()) break;
  await new Promise((r) => setTimeout(r, 200));
}
const total = Number(await readFile(join(group, 'cpuacct.usage'), 'utf8')) / 1e9;
await rmdir(group).catch(() => {});

const byKind = new Map();
for (const { kind, cpu } of seen.values()) {
  const k = byKind.get(kind) ?? { cpu: 0, count: 0 };
  k.cpu += cpu;
  k.count += 1;
  byKind.set(kind, k);
}
// PostgreSQL's backends are often too short-lived to be read (a connection per CREATE or DROP
// DATABASE), but the postmaster reaps each one the moment it ends, so what they used is in its
// reaped CPU (cutime, cstime): that, less what its children that were read used, is theirs.
// (Only for PostgreSQL: a parent that reaps a long-lived child after its own last read, as
// vitest's main process does its workers, would count that child twice.)
const readChildren = new Map();
for (const entry of seen.values()) readChildren.set(entry.parent, (readChildren.get(entry.parent) ?? 0) + entry.cpu + entry.reaped);
let unreadBackends = 0;
for (const entry of seen.values()) {
  if (entry.kind === 'postgresql') unreadBackends += Math.max(0, entry.reaped - (readChildren.get(entry.pid) ?? 0));
}
if (unreadBackends > 0) byKind.set('postgresql: backends too short-lived to read', { cpu: unreadBackends, count: '' });
const rows = [...byKind].sort((a, b) => b[1].cpu - a[1].cpu);
const attributed = rows.reduce((sum, [, k]) => sum + k.cpu, 0);
const lines = [
  `kind\tCPU s\tprocesses`,
  ...rows.map(([kind, k]) => `${kind}\t${k.cpu.toFixed(1)}\t${k.count}`),
  `(not read: the last moments of processes, orphans reaped by init)\t${Math.max(0, total - attributed).toFixed(1)}\t`,
  `total (cgroup)\t${total.toFixed(1)}\t${seen.size}`,
];
process.stdout.write(`\n${lines.join('\n')}\nwall ${((Date.now() - started) / 1000).toFixed(0)} s, exit ${code}, load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after\n`);
if (out) await writeFile(out, lines.join('\n') + '\n');
process.exitCode = typeof code === 'number' ? code : 1;
