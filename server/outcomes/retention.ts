// Retention (docs/api.md#what-a-call-leaves-behind): a session's timeline and recording are kept
// for --retention-days, then forgotten; the session's row (times, cost, end reason) stays for
// billing and the list. Purged at start and then hourly, a bounded batch per durable write with the
// event loop free between batches; recording files are unlinked asynchronously.
//
// Recordings are files on the disk of the node that carried the call, not rows: with several nodes
// on PostgreSQL, the node that purges a session's row is often not the one whose folder holds its
// file (docs/hosting.md#several-nodes-on-postgresql). So each node also sweeps its own recordings
// folder every pass: a recording last written before the cutoff belongs to a session created before
// it (a session is created before its recording starts, and a live recording is written every
// second), so it is past retention whoever purged the row, and this node deletes it. What it cannot
// delete it names in its log, and tries again on the next pass.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Store } from '../store/store.ts';

const BATCH = 50;
const EVERY_MS = 60 * 60 * 1000;
/** The file names recordings are written under (recording.ts): a session id and the format's extension. */
const RECORDING_FILE = /^[A-Za-z0-9_-]+\.(wav|ogg)$/;

export const recordingsDir = (dataDir: string) => join(dataDir, 'recordings');

/** A recording file a pass could not delete, and why. */
export interface UndeletedRecording {
  file: string;
  reason: string;
}

export interface PurgeReport {
  /** Sessions whose timelines and recording names were forgotten in the store. */
  sessions: number;
  /** Recording files deleted from this node's folder. */
  files: number;
  /** Recording files past retention this node could not delete (tried again next pass). */
  undeleted: UndeletedRecording[];
}

const reasonOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));

/** Deletes a file of this node's recordings folder; false when it was not there. */
async function removeRecording(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Purges everything past retention as of `nowSecs`: the store's timelines and recording names (any
 * node's sessions), and this node's recording files of sessions created before the cutoff.
 */
export async function purgeExpiredWithReport(store: Store, dataDir: string, retentionDays: number, nowSecs: number = Date.now() / 1000): Promise<PurgeReport> {
  const cutoff = nowSecs - retentionDays * 86_400;
  const dir = recordingsDir(dataDir);
  const report: PurgeReport = { sessions: 0, files: 0, undeleted: [] };
  const failed = new Map<string, string>();
  for (;;) {
    const batch = await store.timelines.purgeBefore(cutoff, BATCH);
    for (const { recordingFile } of batch) {
      // Only a bare file name from our own column, never a path a client chose. Absent here when
      // another node carried the call: that node's own sweep deletes it.
      if (!recordingFile || /[/\\]/.test(recordingFile)) continue;
      try {
        if (await removeRecording(join(dir, recordingFile))) report.files++;
      } catch (error) {
        failed.set(recordingFile, reasonOf(error));
      }
    }
    report.sessions += batch.length;
    if (batch.length < BATCH) break;
    await yieldToLoop();
  }
  const swept = await sweepRecordings(dir, cutoff);
  report.files += swept.files;
  for (const { file, reason } of swept.undeleted) failed.set(file, reason);
  report.undeleted = [...failed].map(([file, reason]) => ({ file, reason }));
  return report;
}

/** Purges everything past retention as of `nowSecs`; returns how many sessions were purged. */
export async function purgeExpired(store: Store, dataDir: string, retentionDays: number, nowSecs: number = Date.now() / 1000): Promise<number> {
  return (await purgeExpiredWithReport(store, dataDir, retentionDays, nowSecs)).sessions;
}

/** Deletes the recordings in `dir` last written before `cutoff` (Unix seconds). */
async function sweepRecordings(dir: string, cutoff: number): Promise<{ files: number; undeleted: UndeletedRecording[] }> {
  const out = { files: 0, undeleted: [] as UndeletedRecording[] };
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return out; // nothing recorded here yet
    throw error;
  }
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (!RECORDING_FILE.test(name)) continue;
    const path = join(dir, name);
    try {
      const info = await stat(path);
      if (!info.isFile() || info.mtimeMs / 1000 >= cutoff) continue;
      if (await removeRecording(path)) out.files++;
    } catch (error) {
      // Gone between the listing and now: another pass (or a node sharing the folder) took it.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') out.undeleted.push({ file: name, reason: reasonOf(error) });
    }
    if (i % BATCH === BATCH - 1) await yieldToLoop();
  }
  return out;
}

export interface RetentionLog {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

/** Purges now and every hour until stopped. */
export function startRetention(store: Store, dataDir: string, retentionDays: number, log: RetentionLog): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = purgeExpiredWithReport(store, dataDir, retentionDays).then(
      ({ sessions, files, undeleted }) => {
        if (sessions > 0 || files > 0) log.info({ sessions, recordingFiles: files, retentionDays }, 'forgot the timelines and recordings of old sessions');
        if (undeleted.length > 0) {
          log.warn(
            { folder: recordingsDir(dataDir), files: undeleted, retentionDays },
            `could not delete ${undeleted.length} recording file(s) past retention (tried again in an hour): ${undeleted.map((u) => `${u.file} (${u.reason})`).join(', ')}`,
          );
        }
      },
      (error: unknown) => log.warn({ err: error }, 'could not purge old session timelines'),
    );
  };
  run();
  const timer = setInterval(run, EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
