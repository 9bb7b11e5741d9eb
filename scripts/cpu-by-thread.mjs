// Where a test file's CPU goes inside its worker process, by thread: the main thread (the test,
// the servers it starts in-process, the fakes), each kind of worker thread (flite, Silero, the
// end-of-turn model, the flow-job and store workers) and the threads Node names no script for
// (V8's garbage collector and compilers, libuv's pool). Runs the command with
// scripts/thread-names.cjs preloaded (which says which OS thread is which) and TEST_FILE_CPU set,
// reads /proc/<pid>/task/*/stat of every vitest worker process every 100 ms, and splits each
// process's threads' CPU at the moments its files ended (docs/testing.md, "What a call costs").
//
//   node scripts/cpu-by-thread.mjs -- node scripts/run-tests.mjs --project integration test/voice/x.test.ts …
//
// A file's figures are its worker process's since that process's previous file ended (its start,
// for the first: imports and first-in-process costs such as compiling flite are in it). A thread
// that ends between two reads loses its last 100 ms at most, so the threads' sum falls a little
// short of TEST_FILE_CPU when a file starts and stops many workers.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const SAMPLE_MS = 100;
const TICKS = 100; // USER_HZ: /proc/<pid>/task/<tid>/stat counts hundredths of a second
const UNNAMED = 'other threads (V8 GC and compilers, libuv pool)';

const dashes = process.argv.indexOf('--');
if (dashes === -1 || dashes === process.argv.length - 1) {
  process.stderr.write('usage: node scripts/cpu-by-thread.mjs -- <command> [args…]\n');
  process.exit(2);
}
const command = process.argv.slice(dashes + 1);
const dir = await mkdtemp(join(tmpdir(), 'voxflow-threads-'));
const filesTsv = join(dir, 'files.tsv');

/** `${pid}/${tid}` → CPU ticks when last read. */
const ticks = new Map();
/** Per ended file: its line of TEST_FILE_CPU and a copy of `ticks` at that moment. */
const ended = [];
let linesSeen = 0;

async function names() {
  const out = new Map(); // pid → Map(tid → name)
  for (const entry of await readdir(dir)) {
    const pid = /^(\d+)\.tsv$/.exec(entry)?.[1];
    if (!pid) continue;
    const rows = (await readFile(join(dir, entry), 'utf8')).trim().split('\n').map((line) => line.split('\t'));
    const scripts = new Map(rows.filter((r) => r[0] === 'script').map((r) => [r[1], r[2]]));
    const threads = new Map();
    for (const [kind, a, b] of rows) {
      if (kind === 'main') threads.set(a, 'main thread');
      else if (kind === 'worker') threads.set(b, scripts.get(a) ?? 'a worker thread');
    }
    out.set(pid, threads);
  }
  return out;
}

async function sample() {
  for (const entry of await readdir(dir)) {
    const pid = /^(\d+)\.tsv$/.exec(entry)?.[1];
    if (!pid) continue;
    const tids = await readdir(`/proc/${pid}/task`).catch(() => []);
    await Promise.all(
      tids.map(async (tid) => {
        const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => null);
        if (!stat) return;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks.set(`${pid}/${tid}`, Number(fields[11]) + Number(fields[12]));
      }),
    );
  }
  const lines = (await readFile(filesTsv, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  for (; linesSeen < lines.length; linesSeen++) ended.push({ line: lines[linesSeen].split('\t'), at: new Map(ticks) });
}

const load = loadavg().map((l) => l.toFixed(2)).join(' ');
const child = spawn(command[0], command.slice(1), {
  stdio: 'inherit',
  env: {
    ...process.env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${new URL('./thread-names.cjs', import.meta.url).pathname}`.trim(),
    CPU_BY_THREAD_DIR: dir,
    TEST_FILE_CPU: filesTsv,
  },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
let sampling = Promise.resolve();
const timer = setInterval(() => (sampling = sampling.then(sample)), SAMPLE_MS);
const code = await new Promise((resolve) => child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
clearInterval(timer);
await sampling;
await sample();
const processes = await names();
await rm(dir, { recursive: true, force: true });

/** CPU seconds by thread name of process `pid` between two copies of `ticks`. */
function byName(pid, from, to) {
  const out = new Map();
  for (const [key, now] of to) {
    const [p, tid] = key.split('/');
    if (p !== pid) continue;
    const name = processes.get(pid)?.get(tid) ?? UNNAMED;
    out.set(name, (out.get(name) ?? 0) + (now - (from.get(key) ?? 0)) / TICKS);
  }
  return out;
}

const format = (seconds, all) => `${seconds.toFixed(2).padStart(7)} s ${((100 * seconds) / all).toFixed(0).padStart(3)} %`;
const totals = new Map();
const previous = new Map(); // pid → ticks at its previous file's end
const lines = [`load average before: ${load}`, ''];
for (const { line, at } of ended) {
  const [project, file, cpu, , pid] = line;
  const split = byName(pid, previous.get(pid) ?? new Map(), at);
  const first = !previous.has(pid);
  previous.set(pid, at);
  const all = [...split.values()].reduce((a, b) => a + b, 0);
  lines.push(`${project} ${file}: ${cpu} s (TEST_FILE_CPU), threads ${all.toFixed(2)} s${first ? ', first in its process' : ''}`);
  for (const [name, seconds] of [...split].sort((a, b) => b[1] - a[1])) {
    lines.push(`  ${name.padEnd(50)} ${format(seconds, all)}`);
    totals.set(name, (totals.get(name) ?? 0) + seconds);
  }
}
const all = [...totals.values()].reduce((a, b) => a + b, 0);
lines.push('', `all ${ended.length} files: ${all.toFixed(1)} s of threads, ${ended.reduce((sum, { line }) => sum + Number(line[2]), 0).toFixed(1)} s TEST_FILE_CPU`);
for (const [name, seconds] of [...totals].sort((a, b) => b[1] - a[1])) lines.push(`  ${name.padEnd(50)} ${format(seconds, all)}`);
lines.push(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
process.stdout.write(`${lines.join('\n')}\n`);
process.exit(code);
