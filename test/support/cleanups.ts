// The cleanups test helpers schedule, kept on globalThis: the helpers that fill the lists are
// evaluated once per worker (isolate: false), the setup file that runs them (after-this-test.ts)
// once per test file. This module imports nothing from vitest, so the benches, which run the same
// helpers outside vitest, may import it too.

export type Cleanup = () => Promise<void> | void;

const lists = globalThis as Record<symbol, Cleanup[] | undefined>;
export const pendingForTest: Cleanup[] = (lists[Symbol.for('voxflow.test.afterThisTest')] ??= []);
export const pendingForFile: Cleanup[] = (lists[Symbol.for('voxflow.test.afterThisFile')] ??= []);

/** Runs `cleanup` after the current test, even when it fails; the last scheduled runs first. */
export function afterThisTest(cleanup: Cleanup): void {
  pendingForTest.push(cleanup);
}

/**
 * Runs `cleanup` once the current test file is done, after the file's own afterAll hooks: the
 * safety net for what a hook started but could not hand back (a beforeAll that timed out while
 * its server was still starting leaves the file nothing to close). Cleanups must be idempotent.
 * Outside vitest (the benches) nothing runs them.
 */
export function afterThisFile(cleanup: Cleanup): void {
  pendingForFile.push(cleanup);
}
