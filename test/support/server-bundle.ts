// The server as `npm run serve` runs it: the esbuild bundle (scripts/build-server.mjs), built by
// every project's globalSetup into dist/.server-test/<hash of what goes into it>/ and kept there
// for the next run, so a run whose sources did not change builds nothing (the build costs about
// 5 s of CPU). A folder is named by its contents, so it is never rewritten: two runs in one
// checkout share it when their sources agree and build side by side when they do not, and
// neither touches dist/server.
//
// Two uses, both to skip TypeScript's transform where a test is about the product's behaviour:
// - the tests that start the server as a child process run its main.mjs (spawn-server.ts).
//   Started from the sources instead, each such process spent about 1.6 s more CPU transpiling
//   and resolving modules before it served (2.3 s against 0.7 s to the serving line).
// - the worker threads the in-process servers start from the sources (the flow-job pool's, the
//   embedded store's) load this bundle's flow-worker.mjs and store-worker.mjs
//   (VOXFLOW_WORKER_BUNDLE_DIR, set by worker-bundle-env.ts in every test file) instead of their
//   TypeScript through tsx: 0.25–0.3 s of CPU a start instead of 1.2–1.8 s (flow) and
//   0.2 s instead of 0.9–1.5 s (store), paid by every test server that parses a flow.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Inside the project, so the bundle's package imports (its externals) find node_modules. */
const CACHE = join(ROOT, 'dist', '.server-test');
/** A folder no run has used for this long is removed (a run takes minutes). */
const UNUSED_FOR_MS = 6 * 3_600_000;

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the folder holding this run's bundled main.mjs and its workers. */
    voxflowServerBundleDir: string;
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name)).sort();
}

/** Every input of the build: the server's files, the packages it bundles (by the lock file), the script. */
async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const inputs = [...(await filesUnder(join(ROOT, 'server'))), ...['package.json', 'package-lock.json', 'scripts/build-server.mjs'].map((f) => join(ROOT, f))];
  for (const file of inputs) {
    hash.update(file.slice(ROOT.length)).update('\0');
    hash.update(await readFile(file).catch(() => Buffer.from('missing'))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

async function build(): Promise<string> {
  const dir = join(CACHE, await sourceHash());
  if (!(await exists(join(dir, 'main.mjs')))) {
    // Built aside and renamed into place whole, so no run ever sees half a bundle.
    const building = `${dir}.building-${process.pid}`;
    try {
      await promisify(execFile)(process.execPath, ['scripts/build-server.mjs', `--outdir=${building}`], { cwd: ROOT });
      await rename(building, dir).catch(async (error: NodeJS.ErrnoException) => {
        // Another run put the same bundle there first.
        if (!(await exists(join(dir, 'main.mjs')))) throw error;
      });
    } finally {
      await rm(building, { recursive: true, force: true });
    }
  }
  const now = new Date();
  await utimes(dir, now, now);
  for (const name of await readdir(CACHE)) {
    const other = join(CACHE, name);
    if (other === dir) continue;
    const { mtimeMs } = await stat(other).catch(() => ({ mtimeMs: Infinity }));
    if (Date.now() - mtimeMs > UNUSED_FOR_MS) await rm(other, { recursive: true, force: true });
  }
  return dir;
}

/** globalSetup of every project: the projects of one run share one build. */
export default async function setup(project: TestProject): Promise<void> {
  const shared = globalThis as { voxflowServerBundle?: Promise<string> };
  shared.voxflowServerBundle ??= build();
  project.provide('voxflowServerBundleDir', await shared.voxflowServerBundle);
}

/** The folder of this run's bundle; a clear error in a project that did not build it. */
export function serverBundleDir(): string {
  const dir = process.env.VITEST ? inject('voxflowServerBundleDir') : undefined;
  if (!dir) throw new Error('no server bundle: this project has no test/support/server-bundle.ts in its globalSetup (vitest.config.ts)');
  return dir;
}

/** This run's bundled main.mjs. */
export function serverBundle(): string {
  return join(serverBundleDir(), 'main.mjs');
}
