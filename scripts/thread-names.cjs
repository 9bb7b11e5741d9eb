// For scripts/cpu-by-thread.mjs, measurement only: preloaded into every Node process of a
// command (NODE_OPTIONS=--require), it writes which OS thread is which, since Node 20 names
// none of its threads. Each process appends to <CPU_BY_THREAD_DIR>/<pid>.tsv its main
// thread's id, and for every worker thread it starts, the thread's id and its script's file
// name (each worker thread runs this file too, as it starts, and says its own id).
const { appendFileSync, readlinkSync } = require('node:fs');
const workerThreads = require('node:worker_threads');

const dir = process.env.CPU_BY_THREAD_DIR;
if (dir) {
  const out = `${dir}/${process.pid}.tsv`;
  const tid = readlinkSync('/proc/thread-self').split('/').pop();
  const write = (...fields) => {
    try {
      appendFileSync(out, `${fields.join('\t')}\n`);
    } catch {
      // the measuring command has ended and removed its folder
    }
  };
  if (workerThreads.isMainThread) {
    write('main', tid, process.argv.slice(1, 3).join(' '));
    const Worker = workerThreads.Worker;
    workerThreads.Worker = class extends Worker {
      constructor(file, options) {
        super(file, options);
        write('script', this.threadId, String(file).split('/').pop());
      }
    };
    // ES modules' `import { Worker } from 'node:worker_threads'` see the class above too.
    require('node:module').syncBuiltinESMExports();
  } else {
    write('worker', workerThreads.threadId, tid);
  }
}
