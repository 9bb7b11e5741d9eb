// With TEST_FILE_CPU=<file.tsv> set, each test file appends a line to that file: the project, the
// file, the CPU time its worker process used while the file ran (every thread of the process: the
// test code, the servers it starts in-process and their worker threads; not the child processes
// it spawns), its wall time and the worker's process id (scripts/cpu-by-thread.mjs splits each
// process's threads by file). A worker runs its files one after another, so the delta is the
// file's own. A vitest setup file (vitest.config.ts); nothing happens without the variable.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

const out = process.env.TEST_FILE_CPU;
if (out) {
  let cpu: NodeJS.CpuUsage;
  let started = 0;
  beforeAll(() => {
    cpu = process.cpuUsage();
    started = performance.now();
  });
  afterAll(({}, suite) => {
    const used = process.cpuUsage(cpu);
    const file = expect.getState().testPath ?? '?';
    const project = (suite as { file?: { projectName?: string } }).file?.projectName ?? '';
    appendFileSync(out, `${project}\t${file.replace(`${process.cwd()}/`, '')}\t${((used.user + used.system) / 1e6).toFixed(2)}\t${((performance.now() - started) / 1000).toFixed(1)}\t${process.pid}\n`);
  });
}
