// /health says `degraded` (503) before a write fails on a full disk: once the free space of the
// disk the data folder and its recordings are on falls below --min-free-disk-mb, and `ok` again
// by itself once space is freed. Nothing fills a real disk: the minimum is set above the free
// space, or just below it on a RAM disk and then crossed by writing a file and deleting it.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { access, constants, mkdtemp, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isRunning } from '../../../server/store/sqljs/lockfile.ts';
import { afterThisTest } from '../../support/after-this-test.ts';
import { startTestServer } from '../../support/server.ts';

const MIB = 1024 * 1024;
const run = promisify(execFile);

/** A data folder of its own, removed after the test; on `under` when given. */
async function dataFolder(under = tmpdir()): Promise<string> {
  const dir = await mkdtemp(join(under, 'voxflow-disk-'));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function freeBytes(path: string): Promise<number> {
  const fs = await statfs(path);
  return fs.bavail * fs.bsize;
}

/**
 * How far the minimum sits under the free space, and the file that takes the disk below it: wide,
 * since the test run's own PostgreSQL clusters live on the RAM disk (test/support/postgres.ts)
 * and move its free space by a few hundred MiB as files make and drop their databases.
 */
const MARGIN_MIB = 1024;
const FILLER_MIB = 2 * MARGIN_MIB;

/** A RAM disk with room for the file, so its free space holds still while the test crosses the minimum. */
async function quietDisk(): Promise<string> {
  try {
    if (existsSync('/dev/shm')) {
      await access('/dev/shm', constants.W_OK);
      if ((await freeBytes('/dev/shm')) > (FILLER_MIB + MARGIN_MIB) * MIB) return '/dev/shm';
    }
  } catch {
    // not writable here: the temp folder's disk instead
  }
  return tmpdir();
}

/** A file that takes `mib` of the disk at once: fallocate has the kernel reserve it, with no copy from here. */
async function fill(path: string, mib: number): Promise<void> {
  await run('fallocate', ['-l', `${mib}M`, path]);
}

/**
 * Runs `work` with the disk's free space to this test alone among the test runs on this machine:
 * a second `npm test` beside this one writes its own file to the same RAM disk, which
 * moved this one's free space across its minimum both ways. The runs take turns by a lock file
 * on that disk; a lock left by a run that died is taken over.
 */
async function withTheDiskToItself<T>(disk: string, work: () => Promise<T>): Promise<T> {
  const lock = join(disk, 'voxflow-free-space-test.lock');
  for (;;) {
    try {
      await writeFile(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(await readFile(lock, 'utf8').catch(() => '0'));
      if (owner > 0 && isRunning(owner)) await delay(250);
      else await rm(lock, { force: true });
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

describe('/health and free disk space', () => {
  it('answers 503 degraded, saying which folder is short of space, when the minimum is above the free space', { timeout: 60_000 }, async () => {
    const dataDir = await dataFolder();
    // Far above what any disk here has free.
    const server = await startTestServer({ dataDir, minFreeDiskMb: 1024 ** 3 });
    afterThisTest(() => server.close());

    await expect.poll(async () => (await server.request('GET', '/health')).status, { timeout: 30_000, interval: 250 }).toBe(503);
    const { body } = await server.request('GET', '/health');
    expect(body).toMatchObject({ status: 'degraded', store_writable: true, service: 'voxflow' });
    expect(body.problems).toEqual([expect.stringMatching(/^disk space low: [\d.]+ MiB free for the data folder and the recordings folder, below 1073741824 MiB$/)]);
    expect(body.disk_free_bytes).toBeGreaterThan(0);
    // Only the node's health: the API still works while there is space to write.
    expect((await server.request('POST', '/auth/signup', { body: { email: 'disk@example.com', password: 'correct horse battery staple' } })).status).toBe(200);
  });

  it('turns degraded when a file takes the disk below the minimum, and ok again once it is deleted', { timeout: 150_000 }, async () => {
    const disk = await quietDisk();
    await withTheDiskToItself(disk, async () => {
      const dataDir = await dataFolder(disk);
      // The minimum sits MARGIN_MIB under the free space now; a file twice that takes the disk below
      // it. (The margins are wide so what other processes write there meanwhile cannot decide it.)
      const minFreeDiskMb = Math.floor((await freeBytes(disk)) / MIB) - MARGIN_MIB;
      const server = await startTestServer({ dataDir, minFreeDiskMb });
      afterThisTest(() => server.close());
      const health = () => server.request('GET', '/health');

      await expect.poll(async () => (await health()).body.disk_free_bytes, { timeout: 30_000, interval: 250 }).toBeGreaterThan(minFreeDiskMb * MIB);
      const before = await health();
      expect(before.status).toBe(200);
      expect(before.body).toMatchObject({ status: 'ok', problems: [] });

      // Removed before the disk is handed on, whatever happens here.
      const filler = join(dataDir, 'filler.bin');
      try {
        await fill(filler, FILLER_MIB);
        await expect.poll(async () => (await health()).status, { timeout: 30_000, interval: 250 }).toBe(503);
        const low = await health();
        expect(low.body).toMatchObject({ status: 'degraded', store_writable: true });
        expect(low.body.problems).toEqual([expect.stringContaining(`below ${minFreeDiskMb} MiB`)]);
        expect(low.body.disk_free_bytes).toBeLessThan(minFreeDiskMb * MIB);

        await rm(filler);
        await expect.poll(async () => (await health()).status, { timeout: 30_000, interval: 250 }).toBe(200);
        expect((await health()).body).toMatchObject({ status: 'ok', problems: [] });
      } finally {
        await rm(filler, { force: true });
      }
    });
  });
});
