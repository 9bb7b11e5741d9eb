// Stopping a worker thread that runs onnxruntime (the Silero VAD, the end-of-turn model).
// Worker.terminate() while one of its session.run() calls is in flight aborts the whole process:
// the run finishes on onnxruntime's own thread, calls back into a JavaScript environment that is
// being torn down, and node-addon-api throws a Napi::Error nobody can catch ("terminate called
// after throwing an instance of 'Napi::Error'"). Reproduced by stopping the shared Silero worker
// with frames in flight thirty times in a process: each of three such processes aborted (and the
// regression test, test/providers/turn-models-stop-cleanly-with-runs-in-flight.test.ts, with the
// old stop). So the worker is asked
// to stop: it lets its runs in flight finish, releases its session and exits by itself; terminate()
// is only the fallback for a worker that does not answer in time.
import type { Worker } from 'node:worker_threads';

/** The message a worker of this kind takes as "finish what is running, release, exit". */
export const SHUTDOWN_MESSAGE = { type: 'shutdown' } as const;

/** How long a worker gets to finish its runs and exit before it is terminated. */
const SHUTDOWN_WAIT_MS = 5_000;

export async function stopWorkerGracefully(worker: Worker, waitMs = SHUTDOWN_WAIT_MS): Promise<void> {
  if (worker.threadId === -1) return; // exited already
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // Kept alive while it finishes, or an unref'd worker could be cut off by the process's exit.
  worker.ref();
  worker.postMessage(SHUTDOWN_MESSAGE);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
  const outcome = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') await worker.terminate();
}
