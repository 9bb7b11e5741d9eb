// Runs once before the tests: the browser tests load the studio from the server, which serves
// the Vite build in dist/renderer, so it is built here when any of its sources changed. A build
// that fails does not stop the other tests: the error is printed and the old build removed, so
// the studio's own tests fail on the server's "studio is not built" page instead of a stale one.
// It also makes the folder in which each test worker's shared screens server keeps its files
// (test/e2e/studio-screens-server.ts), and removes it once every worker has stopped.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
// @ts-expect-error: a plain ES module script without type declarations.
import { buildStudioIfStale } from '../../scripts/build-renderer.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder the e2e workers' shared screens servers make their homes in. */
    voxflowE2eServersDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const serversDir = await mkdtemp(join(tmpdir(), 'voxflow-e2e-servers-'));
  project.provide('voxflowE2eServersDir', serversDir);
  try {
    // Another run building at the same time is waited for, not raced (see the script).
    await (buildStudioIfStale as () => Promise<void>)();
  } catch (error) {
    process.stderr.write(`\nThe studio (renderer/) does not build; its browser tests will fail:\n${String(error)}\n\n`);
    await rm(fileURLToPath(new URL('../../dist/renderer/index.html', import.meta.url)), { force: true });
  }
  return () => rm(serversDir, { recursive: true, force: true });
}
