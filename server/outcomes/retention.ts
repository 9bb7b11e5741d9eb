// Retention (docs/api.md#what-a-call-leaves-behind): a session's timeline and recording are kept
// for --retention-days, then forgotten; the session's row (times, cost, end reason) stays for
// billing and the list. Purged at start and then hourly, a bounded batch per durable write with the
// event loop free between batches; recording files are unlinked asynchronously.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Store } from '../store/store.ts';

const BATCH = 50;
const EVERY_MS = 60 * 60 * 1000;

export const recordingsDir = (dataDir: string) => join(dataDir, 'recordings');

/** Purges everything past retention as of `nowSecs`; returns how many sessions were purged. */
export async function purgeExpired(store: Store, dataDir: string, retentionDays: number, nowSecs: number = Date.now() / 1000): Promise<number> {
  const cutoff = nowSecs - retentionDays * 86_400;
  let purged = 0;
  for (;;) {
    const batch = await store.timelines.purgeBefore(cutoff, BATCH);
    for (const { recordingFile } of batch) {
      // Only a bare file name from our own column, never a path a client chose.
      if (recordingFile && !/[/\\]/.test(recordingFile)) await rm(join(recordingsDir(dataDir), recordingFile), { force: true });
    }
    purged += batch.length;
    if (batch.length < BATCH) return purged;
    await yieldToLoop();
  }
}

export interface RetentionLog {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

/** Purges now and every hour until stopped. */
export function startRetention(store: Store, dataDir: string, retentionDays: number, log: RetentionLog): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = purgeExpired(store, dataDir, retentionDays).then(
      (purged) => {
        if (purged > 0) log.info({ sessions: purged, retentionDays }, 'forgot the timelines and recordings of old sessions');
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
