// A worker thread of the flow-job pool (flow-jobs.ts): parses, validates and converts flow
// documents so that none of it runs on the thread that paces every session's audio.
//
// Protocol. In: { id, job, yieldToCalls } (a FlowJob; whether calls are live). Out: { type: 'ready', tid } once loaded, then per job
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
/** This thread's nice value as last set (0: the process's priority). */
let nice = 0;

/**
 * While calls are live, a job runs below the thread that paces their audio in 20 ms frames: a
 * flow upload can wait a little, a frame cannot (flite's look-ahead workers do the same). With no
 * call live it runs at the process's priority, or it would yield to every other busy process on
 * the machine. Linux keeps a nice value per thread; elsewhere os.setPriority would lower the
 * whole process, so it is skipped. Going back up needs the right to (root, CAP_SYS_NICE or
 * RLIMIT_NICE); without it the thread stays lowered until it idles out.
 */
function setNice(wanted: number): void {
  if (tid === null || wanted === nice) return;
  try {
    setPriority(tid, wanted);
    nice = wanted;
  } catch {
    // not permitted: keep the priority the thread has
  }
}

/** A result's byte fields (flow-job.ts makes each in a buffer of its own): moved to the pool's thread, not copied. */
function transferable(result: object): ArrayBuffer[] {
  const buffers: ArrayBuffer[] = [];
  for (const value of Object.values(result)) {
    if (value instanceof Uint8Array && value.buffer instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) buffers.push(value.buffer);
  }
  return buffers;
}

port.on('message', ({ id, job, yieldToCalls }: { id: number; job: FlowJob; yieldToCalls?: boolean }) => {
  setNice(yieldToCalls ? 10 : 0);
  try {
    const result = runFlowJob(job);
    port.postMessage({ type: 'done', id, result }, transferable(result));
  } catch (error) {
    port.postMessage({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) });
  }
});
port.postMessage({ type: 'ready', tid });
