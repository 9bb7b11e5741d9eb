// CPU time per thread of this process (Linux /proc), to see where a load's CPU goes: the main
// thread, the VAD and TTS workers, V8's GC helpers, libuv's pool. Used by the profile scripts.
import { readFileSync } from 'node:fs';
import { threads, type ThreadInfo } from '../support/threads.ts';

export const threadCpu = (): ThreadInfo[] => threads();

/** Per thread, the share of one core used between two samples taken `wallMs` apart. */
export function threadCpuReport(before: ThreadInfo[], after: ThreadInfo[], wallMs: number): string {
  // Threads by name, except that the main thread (tid = pid) is "main" and each thread that used
  // over 2% is listed on its own (Node 20 names worker threads and V8's helpers alike "node").
  const start = new Map(before.map((t) => [t.tid, t.cpuMs]));
  const byName = new Map<string, number>();
  for (const { tid, name, cpuMs } of after) {
    const used = cpuMs - (start.get(tid) ?? 0);
    const key = tid === process.pid ? 'main' : used > wallMs * 0.02 ? `${name}#${tid}` : name;
    byName.set(key, (byName.get(key) ?? 0) + used);
  }
  return [...byName]
    .filter(([, used]) => used > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, used]) => `${name} ${((used * 100) / wallMs).toFixed(1)}%`)
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
