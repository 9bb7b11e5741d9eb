// The server as `npm run serve` runs it: the esbuild bundle (scripts/build-server.mjs). The
// integration project's globalSetup builds it once per run into a folder of the run's own (two
// runs in one checkout never rewrite each other's files, nor dist/server), and the tests that start
// the server as a child process run it. Started from the sources instead, each such process spent
// about 1.6 s more CPU transpiling and resolving modules before it served (2.3 s against 0.7 s to
// the serving line, measured here), over a dozen processes a run.
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of this run's bundled main.mjs, in the integration project only. */
    voxflowServerBundle: string;
  }
}

/** globalSetup: builds the bundle (the folder must be inside the project, for node_modules). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const outdir = join(ROOT, 'dist', `.server-test-${process.pid}`);
  await promisify(execFile)(process.execPath, ['scripts/build-server.mjs', `--outdir=${outdir}`], { cwd: ROOT });
  project.provide('voxflowServerBundle', join(outdir, 'main.mjs'));
  return () => rm(outdir, { recursive: true, force: true });
}

/** This run's bundle; a clear error in a project that did not build it. */
export function serverBundle(): string {
  const bundle = process.env.VITEST ? inject('voxflowServerBundle') : undefined;
  if (!bundle) throw new Error('no server bundle: this file must run in the integration project, whose globalSetup builds it (vitest.config.ts)');
  return bundle;
}
