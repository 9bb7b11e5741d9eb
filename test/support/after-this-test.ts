// Runs the cleanups shared test helpers schedule (cleanups.ts): a test's after that test, a
// file's after that file. This file is a vitest setup file (see vitest.config.ts).
//
// A helper module cannot register its own afterEach at its top level: the suite runs with
// isolate: false, so a helper is evaluated once per worker, and a hook it registers then belongs
// to the first file that imported it only. Every later file of that worker ran without it (one
// run of test/store left 89 data folders, most with an open store's lockfile, in /tmp). A setup
// file runs for every test file, so its hooks cover them all.
import { afterAll, afterEach } from 'vitest';
import { pendingForFile, pendingForTest, type Cleanup } from './cleanups.ts';

export { afterThisFile, afterThisTest } from './cleanups.ts';

async function runAll(cleanups: Cleanup[]): Promise<void> {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // A cleanup that fails (a store already closed by the test) must not stop the others.
    }
  }
}

afterEach(() => runAll(pendingForTest.splice(0)));
// Registered before the file's own hooks, so (after-hooks run last-registered first) it runs after them.
afterAll(() => runAll(pendingForFile.splice(0)));
