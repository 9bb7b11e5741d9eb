// A real PostgreSQL for tests (docs/hosting.md#several-nodes-on-postgresql): Debian's server
// binaries, a fresh cluster made by initdb in a temp dir, started by pg_ctl on a free port, stopped
// and removed afterwards. initdb refuses to run as root, so as root the cluster belongs to the
// `postgres` user (which Debian's package creates). Nothing here installs anything: .ci/run does,
// and without the binaries startPostgres() fails with a message naming the package.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestPostgres {
  /** postgres://… of a database made for the caller. */
  url: string;
  port: number;
  /** The cluster's temp dir, removed by stop(). */
  dir: string;
  /** A new, empty database; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast: connections are cut) and starts it again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) {
    throw new Error("PostgreSQL's server is not installed: run 'sudo apt-get install postgresql' (Debian), or let .ci/run install it");
  }
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0]!, 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface StartPostgresOptions {
  /**
   * fsync and synchronous commit on (the default, as in production; the benches need it). Off
   * for suites that test the API and the repositories, not PostgreSQL's own durability: with
   * them on, every CREATE DATABASE and commit fsyncs, and beside the rest of \`npm test\` that
   * starved the embedded store's own fsync tests (a 300-write snapshot test timed out at 60 s).
   * A Voxflow node killed in a test loses nothing either way: PostgreSQL itself keeps running.
   */
  durable?: boolean;
  /** More server settings (`-c name=value`), e.g. shared_preload_libraries for a bench's statistics. */
  settings?: Record<string, string>;
}

/**
 * Where a cluster's folder goes: a cluster that does not sync (`durable: false`) is not about the
 * disk, so it goes in the run's folder in memory (tmpfs) when `npm test` made one
 * (TEST_TMPFS_DIR, scripts/run-tests.mjs), else in the temp folder. CREATE DATABASE writes a file
 * per table and index (about 300 for the migrated template): on this machine's ext4, which has no
 * journal and so scans for inodes not recently freed before it hands one out, a CREATE and DROP
 * DATABASE cost 100–300 ms of CPU against 16–20 ms in memory (docs/testing.md, "Where the suite's
 * CPU goes").
 */
function clusterParent(options: StartPostgresOptions): string {
  const memory = process.env.TEST_TMPFS_DIR;
  return options.durable === false && memory && existsSync(memory) ? memory : tmpdir();
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const durability = [
    // In memory, the WAL is memory too: CREATE DATABASE writes the whole template (9 MB) to it, and
    // the default 1 GB between checkpoints would hold a gigabyte of it for each cluster, moving the
    // RAM disk's free space under the test that reads it (health-says-when-the-disk-is-nearly-full).
    options.durable === false ? '-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_wal_size=64MB -c min_wal_size=32MB' : '-c fsync=on -c synchronous_commit=on',
    ...Object.entries(options.settings ?? {}).map(([name, value]) => {
      if (!/^[a-z_.]+$/.test(name) || !/^[\w.,]+$/.test(value)) throw new Error(`not a plain PostgreSQL setting: ${name}=${value}`);
      return `-c ${name}=${value}`;
    }),
  ].join(' ');
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const dir = await mkdtemp(join(clusterParent(options), 'voxflow-pg-'));
  const data = join(dir, 'data');
  // As root, the cluster's files belong to `postgres`: the temp dir must let it in.
  const as = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { cwd: '/' }) : run(join(bin, command), args);
  if (asRoot) {
    await chmod(dir, 0o777);
  }
  await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync']);
  const port = await freePort();
  // No socket directory of the system's (it may not exist or be writable): TCP on loopback only.
  const start = () => as('pg_ctl', ['-D', data, '-l', join(data, 'log'), '-w', '-t', '60', '-o', `-p ${port} -h 127.0.0.1 -k ${dir} ${durability}`, 'start']);
  await start();
  const base = `postgres://postgres@127.0.0.1:${port}`;
  let stopped = false;
  return {
    url: `${base}/postgres`,
    port,
    dir,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await run(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]);
      return `${base}/${name}`;
    },
    async restart() {
      await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
