import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, after vitest's own summary.
 * A test that never ran because its file or suite failed to set up (a beforeAll that threw, a
 * browser that is missing) is a failure, not a skip; a hook that failed after every test passed
 * counts once.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of modules) {
      const broken = brokenContainers(module);
      const blamed = new Set<TestModule | TestSuite>();
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        const brokenAncestor = ancestors(test).find((container) => broken.has(container));
        if (state === 'passed') passed++;
        else if (state === 'failed' || brokenAncestor) {
          failed++;
          if (brokenAncestor) blamed.add(brokenAncestor);
        } else skipped++;
      }
      // A file that fails to load, or a hook that failed with no test left to blame.
      for (const container of broken) if (!blamed.has(container) && !hasFailedTest(container)) failed++;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

/** The file and the suites in it that report errors of their own (their hooks, or loading). */
function brokenContainers(module: TestModule): Set<TestModule | TestSuite> {
  const broken = new Set<TestModule | TestSuite>();
  if (module.state() === 'failed' && module.errors().length > 0) broken.add(module);
  for (const suite of module.children.allSuites()) if (suite.errors().length > 0) broken.add(suite);
  return broken;
}

function ancestors(test: TestCase): Array<TestModule | TestSuite> {
  const out: Array<TestModule | TestSuite> = [];
  for (let at: TestModule | TestSuite = test.parent; ; at = at.parent) {
    out.push(at);
    if (at.type === 'module') return out;
  }
}

function hasFailedTest(container: TestModule | TestSuite): boolean {
  for (const test of container.children.allTests()) if (test.result().state === 'failed') return true;
  return false;
}
