// Cleanups a shared test helper schedules for the test that is running, run after that test
// (this file is a vitest setup file; see vitest.config.ts).
//
// A helper module cannot register its own afterEach at its top level: the suite runs with
// isolate: false, so a helper is evaluated once per worker, and a hook it registers then belongs
// to the first file that imported it only. Every later file of that worker ran without it (one
// run of test/store left 89 data folders, most with an open store's lockfile, in /tmp). A setup
// file runs for every test file, so its hook covers them all. The list lives on globalThis:
// the helpers that fill it are evaluated once per worker, this file once per test file.
import { afterEach } from 'vitest';

const KEY = Symbol.for('voxflow.test.afterThisTest');
type Cleanup = () => Promise<void> | void;
const pending: Cleanup[] = ((globalThis as Record<symbol, Cleanup[] | undefined>)[KEY] ??= []);

/** Runs `cleanup` after the current test, even when it fails; the last scheduled runs first. */
export function afterThisTest(cleanup: Cleanup): void {
  pending.push(cleanup);
}

afterEach(async () => {
  for (const cleanup of pending.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // A cleanup that fails (a store already closed by the test) must not stop the others.
    }
  }
});
