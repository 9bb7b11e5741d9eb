// Stands in for flite-worker.mjs with its message protocol, for the host's failure paths.
// Each result is 200 ms of audio whose every sample is the number of jobs this worker has
// received, so a test can tell which jobs reached it. "crash" in the text throws (an uncaught
// exception ends the thread); "slow N" holds the thread for N ms, like a long flite run.
import { parentPort } from 'node:worker_threads';

let jobs = 0;
parentPort.postMessage({ type: 'ready' });
parentPort.on('message', ({ id, text }) => {
  jobs++;
  if (text.includes('crash')) throw new Error('simulated crash');
  const slow = /slow (\d+)/.exec(text);
  if (slow) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(slow[1]));
  const samples = new Int16Array(3200).fill(jobs);
  parentPort.postMessage({ type: 'done', id, sampleRate: 16000, samples: samples.buffer }, [samples.buffer]);
});
