// A flow job yields the CPU to the thread that paces audio while calls are live, and runs at the
// process's priority when none is: at nice 10 with no call to protect, an edit only yielded to
// every other busy process on the machine and took minutes beside a second test suite.
import { afterEach, describe, expect, it } from 'vitest';
import { FlowJobs } from '../../../server/jobs/flow-jobs.ts';
import { busiestThread, threads } from '../../support/threads.ts';
import { oneLineStatesYaml } from '../../support/one-line-flows.ts';

const DOCUMENT = oneLineStatesYaml(800);

let pool: FlowJobs | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

/** The nice value of the thread that did most of one validation of DOCUMENT (or of its view for the studio's canvas). */
async function niceOfTheWork(jobs: FlowJobs, job: 'validate' | 'view' = 'validate'): Promise<number> {
  const before = threads();
  if (job === 'view') {
    const made = await jobs.flowView('account', DOCUMENT, null, '{"view":', '}');
    expect(made.readable).toBe(true);
  } else {
    const diagnostics = await jobs.validate('account', DOCUMENT);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  }
  const busiest = busiestThread(before, threads());
  expect(busiest.tid, 'the work ran on a worker thread, not this one').not.toBe(process.pid);
  return busiest.nice;
}

describe('a flow job', () => {
  it('runs at the process priority with no call live, below it while one is, and back up once calls end', { timeout: 120_000 }, async () => {
    let live = 0;
    pool = new FlowJobs({ workers: 1, budgetMs: 60_000, callsLive: () => live > 0 });
    // The first job starts the worker and compiles its code: that thread is the busiest either way.
    expect(await niceOfTheWork(pool)).toBe(0);
    live = 1;
    expect(await niceOfTheWork(pool)).toBe(10);
    live = 0;
    // Raising a thread's priority again needs root or CAP_SYS_NICE; the tests run as root.
    expect(await niceOfTheWork(pool)).toBe(0);
  });
});

describe("a flow's view for the studio's canvas", () => {
  it("runs below the process priority even with no call live: it is a head start, and the studio's own worker parses the same text beside it", { timeout: 120_000 }, async () => {
    pool = new FlowJobs({ workers: 1, budgetMs: 60_000 });
    expect(await niceOfTheWork(pool)).toBe(0);
    expect(await niceOfTheWork(pool, 'view')).toBe(10);
    // The next upload runs at the process's priority again (the tests run as root, so the thread may go back up).
    expect(await niceOfTheWork(pool)).toBe(0);
  });
});
