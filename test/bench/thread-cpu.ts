// CPU time per thread of this process (Linux /proc), to see where a load's CPU goes: the main
// thread, the VAD and TTS workers, V8's GC helpers, libuv's pool. Used by the profile scripts.
import { readdirSync, readFileSync } from 'node:fs';

type Sample = Map<string, { name: string; ticks: number }>;

export function threadCpu(): Sample {
  const sample: Sample = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      sample.set(tid, { name, ticks: Number(fields[11]) + Number(fields[12]) }); // utime + stime
    } catch {
      // the thread ended
    }
  }
  return sample;
}

/** Per thread name, the share of one core used between two samples taken `wallMs` apart. */
export function threadCpuReport(before: Sample, after: Sample, wallMs: number): string {
  // Threads by name, except that the main thread (tid = pid) is "main" and each thread that used
  // much is listed on its own (Node 20 names worker threads and V8's helpers alike "node").
  const byName = new Map<string, number>();
  for (const [tid, { name, ticks }] of after) {
    const used = ticks - (before.get(tid)?.ticks ?? 0);
    const key = tid === String(process.pid) ? 'main' : used * 10 > wallMs * 0.02 ? `${name}#${tid}` : name;
    byName.set(key, (byName.get(key) ?? 0) + used);
  }
  const tick = 1000 / 100; // USER_HZ
  return [...byName]
    .filter(([, ticks]) => ticks > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ticks]) => `${name} ${((ticks * tick * 100) / wallMs).toFixed(1)}%`)
    .join(', ');
}

/** CPU ticks (user + system) a whole process has used so far, by pid; 0 once it is gone. */
export function processTicks(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** Share of one core a process used over `wallMs`, from two processTicks readings. */
export const processShare = (before: number, after: number, wallMs: number) => `${(((after - before) * 10 * 100) / wallMs).toFixed(0)}%`;
