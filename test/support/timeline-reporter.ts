// A vitest reporter that writes when each test file started and ended, and how busy the machine's
// cores were every 5 s, as tab-separated lines in the file TEST_TIMELINE_FILE names: what a run's
// wall time waited on (docs/testing.md). Used by hand, not by `npm test`:
//   TEST_TIMELINE_FILE=/tmp/timeline.tsv npm test -- --reporter=default \
//     --reporter=./test/summary-reporter.ts --reporter=./test/support/timeline-reporter.ts
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/** Idle and total jiffies of all cores, from /proc/stat. */
function coreTimes(): { idle: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  return { idle: fields[3]! + fields[4]!, total: fields.reduce((sum, value) => sum + value, 0) };
}

export default class TimelineReporter implements Reporter {
  private readonly file = process.env.TEST_TIMELINE_FILE ?? 'test-timeline.tsv';
  private readonly started = Date.now();

  constructor() {
    writeFileSync(this.file, 'event\tseconds\tproject or busy %\tfile\n');
    let last = coreTimes();
    setInterval(() => {
      const now = coreTimes();
      const busy = 1 - (now.idle - last.idle) / Math.max(1, now.total - last.total);
      last = now;
      this.line('cores', (busy * 100).toFixed(0), '');
    }, 5_000).unref();
  }

  onTestModuleStart(module: TestModule): void {
    this.line('start', module.project.name, module.moduleId);
  }

  onTestModuleEnd(module: TestModule): void {
    this.line('end', module.project.name, module.moduleId);
  }

  private line(event: string, third: string, file: string): void {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    appendFileSync(this.file, `${event}\t${seconds}\t${third}\t${file.replace(/^.*\/test\//, 'test/')}\n`);
  }
}
