// The threads of this process as Linux shows them: id, nice value and CPU time so far.
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadInfo {
  tid: number;
  /** The kernel's name for it (Node 20 names worker threads and V8's helpers alike "node"). */
  name: string;
  nice: number;
  /** CPU time run so far, in ms (schedstat: exact, not tick-rounded). */
  cpuMs: number;
}

export function threads(): ThreadInfo[] {
  const list: ThreadInfo[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpuNs = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      list.push({ tid: Number(tid), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[16]), cpuMs: cpuNs / 1e6 });
    } catch {
      // the thread ended meanwhile
    }
  }
  return list;
}

/** The thread that ran most between two snapshots, and how long. */
export function busiestThread(before: ThreadInfo[], after: ThreadInfo[]): ThreadInfo & { usedMs: number } {
  const start = new Map(before.map((t) => [t.tid, t.cpuMs]));
  return after.map((t) => ({ ...t, usedMs: t.cpuMs - (start.get(t.tid) ?? 0) })).sort((a, b) => b.usedMs - a.usedMs)[0]!;
}
