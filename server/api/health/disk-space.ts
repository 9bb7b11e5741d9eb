// Free disk space where this node writes: the data folder (the embedded store's snapshots and
// journal) and its recordings. A write to a full disk fails, and the store then refuses every
// write; /health says `degraded` before that, once free space falls below --min-free-disk-mb, so a
// load balancer stops sending the node calls while it can still finish the ones it has. Recovery
// is automatic: the next sample that finds enough space clears it.
//
// Sampled every few seconds on a timer, never on a request: statfs runs on libuv's thread pool
// (a slow network disk delays a sample, never a request or the audio), one sample at a time.
import { stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';

/** How often free space is measured. */
export const DISK_SAMPLE_MS = 5_000;
const MIB = 1024 * 1024;

export interface WatchedFolder {
  /** How /health names it (never its path: /health is open to anyone who can reach the node). */
  name: string;
  path: string;
}

export interface DiskSpaceLog {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

/** Bytes as MiB for a person: whole above 10 MiB, one decimal below. */
export const mib = (bytes: number) => `${Number((bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0))} MiB`;

/** The folder itself, or the nearest one above it that exists (where it would be created). */
async function existing(path: string): Promise<{ path: string; dev: number }> {
  for (let at = path; ; at = dirname(at)) {
    try {
      return { path: at, dev: (await stat(at)).dev };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) throw error;
    }
  }
}

export class DiskSpaceWatch {
  private low: string[] = [];
  private lowNames = '';
  private leastFree: number | null = null;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;
  /** Folders whose last sample failed, so a failure is logged once, not every few seconds. */
  private readonly failing = new Set<string>();

  constructor(
    private readonly folders: readonly WatchedFolder[],
    /** Below this many free bytes a folder's disk counts as low; 0: never. */
    private readonly minFreeBytes: number,
    private readonly log: DiskSpaceLog,
    private readonly everyMs = DISK_SAMPLE_MS,
  ) {}

  start(): void {
    if (this.timer) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sampling;
  }

  /** What is wrong as of the last sample, one sentence per disk; empty when all is well. */
  problems(): readonly string[] {
    return this.low;
  }

  /** The least free space of the watched disks at the last sample; null before the first. */
  freeBytes(): number | null {
    return this.leastFree;
  }

  private tick(): void {
    // One at a time: a disk slow to answer must not pile samples up.
    this.sampling ??= this.sample().finally(() => (this.sampling = undefined));
  }

  private async sample(): Promise<void> {
    const seen = new Map<number, { names: string[]; free: number }>();
    for (const folder of this.folders) {
      try {
        const at = await existing(folder.path);
        const same = seen.get(at.dev);
        if (same) {
          same.names.push(folder.name);
          continue;
        }
        const fs = await statfs(at.path);
        seen.set(at.dev, { names: [folder.name], free: fs.bavail * fs.bsize });
        this.failing.delete(folder.path);
      } catch (error) {
        // Unknown is not low: a folder that cannot be measured keeps its last state, said once.
        if (!this.failing.has(folder.path)) this.log.warn({ err: error, folder: folder.path }, `could not measure the free space of the ${folder.name}`);
        this.failing.add(folder.path);
        return;
      }
    }
    const disks = [...seen.values()];
    if (disks.length === 0) return;
    this.leastFree = Math.min(...disks.map((d) => d.free));
    const low = this.minFreeBytes > 0 ? disks.filter((d) => d.free < this.minFreeBytes) : [];
    const problems = low.map((d) => `disk space low: ${mib(d.free)} free for the ${d.names.join(' and the ')}, below ${mib(this.minFreeBytes)}`);
    // Logged when a disk becomes low or recovers, not at every sample while it stays low.
    const lowNames = low.map((d) => d.names.join(',')).join(';');
    if (lowNames !== this.lowNames) {
      const folders = Object.fromEntries(this.folders.map((f) => [f.name, f.path]));
      if (problems.length > 0) this.log.warn({ folders, problems }, 'disk space low: /health says degraded until it is freed');
      else this.log.info({ folders, freeBytes: this.leastFree }, 'disk space back above the minimum: /health says ok again');
    }
    this.low = problems;
    this.lowNames = lowNames;
  }
}
