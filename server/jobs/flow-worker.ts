// A worker thread of the flow-job pool (flow-jobs.ts): parses, validates and converts flow
// documents so that none of it runs on the thread that paces every session's audio.
//
// Protocol. In: { id, job } (a FlowJob). Out: { type: 'ready', tid } once loaded, then per job
// { type: 'done', id, result } or { type: 'failed', id, message }. `tid` is this thread's Linux
// id (null elsewhere): the pool reads the CPU time the thread has used from it.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { runFlowJob, type FlowJob } from './flow-job.ts';

if (!parentPort) throw new Error('flow-worker runs as a worker thread');
const port = parentPort;

function ownThreadId(): number | null {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) ? tid : null;
  } catch {
    return null;
  }
}

const tid = ownThreadId();
// Below the main thread, which paces audio in 20 ms frames: a flow upload can wait a little, a
// frame cannot (the flite look-ahead workers do the same). Linux keeps a nice value per thread;
// elsewhere os.setPriority would lower the whole process, so it is skipped.
if (tid !== null) {
  try {
    setPriority(tid, 10);
  } catch {
    // not permitted: run at the process's priority
  }
}

port.on('message', ({ id, job }: { id: number; job: FlowJob }) => {
  try {
    port.postMessage({ type: 'done', id, result: runFlowJob(job) });
  } catch (error) {
    port.postMessage({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) });
  }
});
port.postMessage({ type: 'ready', tid });
